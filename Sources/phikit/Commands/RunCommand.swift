import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// `phikit run MODEL`: generate a reply and stream it to stdout.
struct RunCommand: Command {
    static let name = "run"
    static let summary = "Generate text with a model"
    static let usage = """
        phikit run <model> [<prompt>... | -p <prompt> | -f <file>] [--system <text>] [-m <n>]
                   [--temp <t>] [<sampling flags>] [--no-chat-template]
                   [--extra-eos-token <token>]... [--ignore-eos] [--stop <text>]...
                   [--max-kv-size <n>] [--kv-bits 8|16|32] [--act-bits 8|16]
                   [--threads <n>] [--stats] [--adapter-path <dir>]
                   [--draft-max <n> | --no-speculative]
                   [--json [--stream]]
                   [--json-schema <file|json> | --json-object | --regex <p> | --grammar <file>]
        phikit run <model> --chat <conversation.json> [options]
        """
    static let help = """
        Runs <model> on a prompt and streams the reply to stdout as it is generated. A model
        with a chat template gets the prompt as a user message (rendered as transformers'
        apply_chat_template does); a base model (no template, or --no-chat-template) gets the
        text as it is, after the tokenizer's BOS. A Hub model not yet in the cache is pulled
        first, unless HF_HUB_OFFLINE is set. A .gguf file is converted first (phikit convert).

        arguments:
          <model>                  registry alias, Hub id or model directory
          <prompt>...              the user message, as ollama takes it (several words are
                                   joined with spaces)

        options:
          -p, --prompt <prompt>    the user message, taken as is even when it begins with
                                   `-`; `-` reads stdin (default: stdin if it is not a
                                   terminal and not empty, else the registry's default
                                   prompt)
          -f, --file <file>        read the user message from a file
          --system <text>          system message (models with a chat template); also
                                   --system-prompt
          --chat <file.json>       answer a saved conversation ([{"role", "content"}], as
                                   `chat`'s /save writes it and `tokenize --chat` reads it)
          -m, --max-tokens <n>     stop after n tokens (default: 256); also -n
          --temp <t>               sampling temperature; 0 is greedy (default: 0, as
                                   mlx-lm, unless generation_config.json samples);
                                   also --temperature
        \(SamplingFlags.help)
          --no-chat-template       send the prompt as plain text; also --ignore-chat-template
          --extra-eos-token <t>    also stop at this token (a string such as <|end|>, or an
                                   id); repeatable
          --stop <text>            end the reply at this text (which is not printed);
                                   repeatable
          --ignore-eos             do not stop at end tokens (benchmarks: exactly -m tokens)
          --max-kv-size <n>        context in tokens, prompt and reply (default: the model's
                                   positions, at most 4096 unless the prompt and -m need
                                   more); a prompt that does not fit is an error
        \(KVBitsOption.help)
        \(ActBitsOption.help)
        \(SpeculationOption.help(default: .default))
        \(AdapterOption.help)
          --threads <n>            threads to compute with (default: all cores)
          --stats                  print token counts, speeds, timings and memory to stderr
          --json                   print one JSON object at the end instead of streaming:
                                   text, tokens, prompt_tokens, stop_reason and the figures
          --stream                 with --json: one object per line as tokens arrive
                                   ({"token": id, "text": piece}), then the final object
        \(OutputFormatFlags.help)

        Stops at the model's end tokens (config.json, generation_config.json, the tokenizer's
        eos token, the registry's extra tokens such as <|end|>), after -m tokens, or when the
        context is full, or when a --json-schema/--regex/--grammar answer is complete
        (structured output is enforced token by token: other tokens are never chosen). Ctrl-C stops generation: what was printed stays, exit 130.
        exit codes: 64 bad options or a prompt longer than the context, 65 bad model files,
          66 model not found (or not cached, offline), 69 network (pull), 74 unreadable -f
          file, 130 interrupted
        """

    var model: String
    var prompt: String?
    var system: String?
    var chat: String?
    var settings: GenerationSettings
    var options = GenerateOptions()
    var loading: ModelLoadFlags
    var stats: Bool
    var json: Bool
    var stream: Bool
    var outputFormat: OutputFormat?

    init(_ args: inout ArgumentReader) throws {
        // Free text first: its value may look like a flag (`-p "-m means what?"`).
        let promptOption = try args.textOption("-p", "--prompt")
        system = try args.textOption("--system", "--system-prompt")
        options.stopStrings = try args.textOptions("--stop")
        let file = try args.option("-f", "--file")
        chat = try args.option("--chat")
        let sampling = try SamplingFlags(&args)
        options.useChatTemplate = !args.flag("--no-chat-template", "--ignore-chat-template")
        options.extraStopTokens = try args.options("--extra-eos-token")
        let ignoreEOS = args.flag("--ignore-eos")
        options.maxContext = try args.option("--max-kv-size", as: Int.self)
        loading = try ModelLoadFlags(&args)
        options.cacheWidth = try KVBitsOption.read(&args)
        options.speculation = try SpeculationOption.read(&args)
        stats = args.flag("--stats")
        json = args.flag("--json")
        stream = args.flag("--stream")
        outputFormat = try OutputFormatFlags.read(&args)
        model = try args.positional("model")
        let words = args.remainingPositionals()
        try args.finish()
        let sources = [promptOption != nil, !words.isEmpty, file != nil]
        if chat != nil && (sources.contains(true) || system != nil || !options.useChatTemplate) {
            throw UsageError(
                "--chat takes the conversation alone (no prompt, -p, -f, --system or "
                    + "--no-chat-template)")
        }
        if sources.filter({ $0 }).count > 1 {
            throw UsageError(
                "give the prompt one way: after the model, with -p or with -f",
                hint: "a prompt of several words after the model needs no quotes; "
                    + "-p takes one argument")
        }
        if let file {
            do {
                prompt = try String(contentsOfFile: file, encoding: .utf8)
            } catch {
                throw RunFileError(path: file)
            }
        } else {
            prompt = promptOption ?? (words.isEmpty ? nil : words.joined(separator: " "))
        }
        if stream && !json { throw UsageError("--stream goes with --json (text always streams)") }
        settings = try sampling.checked()
        settings.ignoreEOS = ignoreEOS
        if let maxContext = options.maxContext, maxContext < 1 {
            throw UsageError("--max-kv-size must be at least 1")
        }
        try loading.check()
    }

    func run() throws {
        // Ctrl-C during a pull of a missing model stops the pull (its own job).
        let container = try loading.load(model)
        // Reading the prompt is no job: Ctrl-C while phikit waits on stdin exits at once.
        let request: RunPrompt =
            if let chat { .chat(try ChatHistory.load(from: chat).messages) } else {
                .text(try promptText(container), system: system)
            }
        // The first Ctrl-C stops generation after the current token (the text so far stays
        // printed, exit 130); a second one exits at once.
        try InterruptibleJob.run { try generate(container, request, cancel: $0) }
    }

    private func generate(
        _ container: ModelContainer, _ request: RunPrompt, cancel: CancellationToken
    ) throws {
        var options = options
        options.constraint = try outputFormat.map {
            try container.structuredOutput($0).makeConstraint()
        }
        let parameters = container.parameters(settings, for: .run)
        try options.constraint?.checkRoom(maxTokens: parameters.maxTokens, naming: "--max-tokens")
        var outputFailure: (any Error)?
        let outcome = try container.generatePieces(
            request, parameters: parameters, options: options, cancel: cancel
        ) { piece in
            // Streamed as soon as each piece is complete; a failed write (a closed
            // pipe, a full disk) stops generation: nobody would see the rest.
            do {
                if stream {
                    try StandardOutput.print(try Format.jsonLine(piece))
                } else if !json, !piece.text.isEmpty {
                    try StandardOutput.print(piece.text, terminator: "")
                }
            } catch {
                outputFailure = error
                return .stop
            }
            return .more
        }
        if let outputFailure { throw outputFailure }
        if stream {
            try StandardOutput.print(try Format.jsonLine(outcome))
        } else if json {
            try StandardOutput.print(try Format.json(outcome))
        } else if !outcome.text.hasSuffix("\n") {
            try StandardOutput.print("")
        }
        if stats { Diagnostics.text(Self.statistics(outcome)) }
        if outcome.stopReason == StopReason.contextFull.rawValue {
            // Not an error (what fits was generated), but never silent.
            Diagnostics.warning(
                "the context (\(outcome.contextTokens) tokens) is full: the answer was cut")
            Diagnostics.hint("give a larger --max-kv-size, or a shorter prompt")
        }
        if cancel.isCancelled { throw RunInterrupted(tokens: outcome.tokens.count) }
    }

    /// The prompt given (arguments, -p, -f), else stdin (`-p -`, or piped text), else the
    /// registry's default prompt.
    private func promptText(_ container: ModelContainer) throws -> String {
        if let prompt, prompt != "-" { return prompt }
        if prompt == "-" || isatty(STDIN_FILENO) == 0 {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            if prompt == "-" || !data.isEmpty { return String(decoding: data, as: UTF8.self) }
        }
        guard let fallback = container.location.entry?.defaultPrompt else {
            throw RunError.noPrompt(model: container.location.name)
        }
        return fallback
    }

    /// mlx-lm's lines, plus what else run measures:
    /// `Prompt: 12 tokens, 20.123 tokens-per-sec` …
    static func statistics(_ o: RunOutcome) -> String {
        func rate(_ value: Double) -> String { Format.fixed(value, decimals: 3) }
        return [
            "Prompt: \(o.promptTokens) tokens, \(rate(o.promptTokensPerSecond)) tokens-per-sec",
            "Generation: \(o.generationTokens) tokens, "
                + "\(rate(o.generationTokensPerSecond)) tokens-per-sec",
            "Time to first token: \(Format.fixed(o.timeToFirstToken, decimals: 3)) s",
            "Load: \(Format.fixed(o.loadSeconds, decimals: 3)) s (weights \(o.weights))",
            "Peak memory: \(Format.fixed(Double(o.peakMemoryBytes) / 1e9, decimals: 3)) GB",
            "Stop: \(o.stopReason), \(o.threads) threads",
            "Speculative: \(o.acceptedDraftTokens) of \(o.draftedTokens) drafted tokens accepted",
        ].joined(separator: "\n")
    }
}

/// `run -f FILE` could not read the file: missing (66), or unreadable or not UTF-8 (74).
struct RunFileError: UserFacingError {
    var path: String
    var message: String {
        FileManager.default.fileExists(atPath: path)
            ? "cannot read the prompt file \(path) as UTF-8 text"
            : "\(path): no such prompt file"
    }
    var hint: String? { "-f takes a text file; -p takes the prompt itself" }
    var exitCode: ExitCode { FileManager.default.fileExists(atPath: path) ? .ioError : .noInput }
}

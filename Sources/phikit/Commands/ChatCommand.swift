import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// `phikit chat MODEL`: a conversation at a prompt, the KV cache carried across turns.
struct ChatCommand: Command {
    static let name = "chat"
    static let summary = "Chat with a model (the KV cache is kept between turns)"
    static let usage = """
        phikit chat <model> [--system <text>] [--load <file.json>] [-m <n>] [--temp <t>]
                    [<sampling flags>] [--stop <text>]... [--extra-eos-token <token>]...
                    [--max-kv-size <n>] [--kv-bits 8|16|32] [--act-bits 8|16]
                    [--threads <n>] [--stats] [--adapter-path <dir>]
                    [--draft-max <n> | --no-speculative]
                    [--cache-dir <dir>] [--cache-size <mb>] [--cache-min-tokens <n>]
                    [--no-disk-cache]
                    [--json-schema <file|json> | --json-object | --regex <p> | --grammar <file>]
        """
    static let help = """
        Talks with <model>: each message and the whole conversation before it go through the
        model's chat template, and only the tokens the KV cache does not already hold are
        computed, so answers start quickly however long the conversation. On a terminal you
        get a line editor (arrows, Home/End, Ctrl-A/Ctrl-E, history with Up/Down, pasting
        several lines); \"\"\" opens and closes a message of several lines. Type /help for the
        commands (/reset, /system, /set temp 0.7, /format json, /save, /load, /stats, /bye).

        Ctrl-C stops an answer (what was said stays in the conversation, marked "cut": true
        when saved) and returns to the prompt; at an empty prompt it says how to leave: Ctrl-D
        or /bye (so a key pressed once too often never loses the conversation). When stdin is not a terminal, each line (or \"\"\" block) is a message and
        each answer is printed followed by a blank line, with no prompt and no colours.

        arguments:
          <model>                  registry alias, Hub id or model directory

        options:
          --system <text>          system message; also --system-prompt
          --load <file.json>       continue a saved conversation ([{"role", "content"}]);
                                   the chat says how many messages it read
          -m, --max-tokens <n>     longest answer (default: the registry's, else 1024);
                                   also -n
          --temp <t>               sampling temperature (default: the registry's, else 0.6);
                                   also --temperature; a sampling setting not given comes
                                   from the registry, then generation_config.json
        \(SamplingFlags.help)
          --stop <text>            end an answer at this text (not shown); repeatable
          --extra-eos-token <t>    also end at this token; repeatable
          --max-kv-size <n>        context in tokens (default: the model's, at most 4096);
                                   the oldest turns are dropped when the next would not fit
        \(KVBitsOption.help)
        \(ActBitsOption.help)
        \(SpeculationOption.help(default: .default))
        \(DiskCacheOption.help)
        \(AdapterOption.help)
          --threads <n>            threads to compute with (default: all cores)
          --stats                  after each answer: prompt tokens (new and reused), time to
                                   first token, tokens per second
        \(OutputFormatFlags.help)
                                   (every answer, until /format off)

        exit codes: 0 on /bye or Ctrl-D; 64 bad options (or, on a
          pipe, a refused message or command); 65 bad model files or no chat template;
          66 model not found
        """

    var model: String
    var options: ChatOptions
    var loading: ModelLoadFlags
    var stats: Bool
    var load: String?
    var diskCache: DiskCacheOption
    var outputFormat: OutputFormat?

    init(_ args: inout ArgumentReader) throws {
        // Free text first, as in run: its value may begin with `-`.
        options = ChatOptions(system: try args.textOption("--system", "--system-prompt"))
        options.stopStrings = try args.textOptions("--stop")
        load = try args.option("--load")
        let sampling = try SamplingFlags(&args)
        options.extraStopTokens = try args.options("--extra-eos-token")
        options.maxContext = try args.option("--max-kv-size", as: Int.self)
        options.cacheWidth = try KVBitsOption.read(&args)
        options.speculation = try SpeculationOption.read(&args)
        loading = try ModelLoadFlags(&args)
        // A conversation decodes for as long as it lasts: where the page cache holds the
        // weights in small folios (decode through 4 KiB pages is ~30% slower) a copy pays
        // back within a few replies (`.hugePagesOrResident`; scripts/bench/README.md). A
        // one-shot `run` keeps the mapping: the copy cost it 2-6 s of load on this host.
        loading.placement = .hugePagesOrResident
        stats = args.flag("--stats")
        diskCache = try DiskCacheOption(&args)
        outputFormat = try OutputFormatFlags.read(&args)
        model = try args.positional("model")
        try args.finish()
        options.settings = try sampling.checked()
        if let maxContext = options.maxContext, maxContext < 1 {
            throw UsageError("--max-kv-size must be at least 1")
        }
        if options.stopStrings.contains("") { throw UsageError("--stop needs a non-empty text") }
        try loading.check()
    }

    func run() throws {
        var options = options
        if let load { options.history = try ChatHistory.load(from: load) }
        let container = try loading.load(model)
        options.diskCache = diskCache.open(container, cacheWidth: options.cacheWidth)
        defer { options.diskCache?.waitForWrites() }
        let chat = try ChatSession(container: container, options: options)
        let answerFormat = try outputFormat.map(container.structuredOutput)
        try answerFormat?.makeConstraint().checkRoom(
            maxTokens: chat.parameters.maxTokens, naming: "--max-tokens")
        let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
        let loop = ChatLoop(
            chat: chat, interactive: interactive, stats: stats, loaded: load,
            answerFormat: answerFormat)
        try loop.run()
    }
}

import Foundation
import PhiEngine
import PhiFormats
import PhiText

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension ModelContainer {
    /// Generates a reply to `prompt`, calling `onText` with each piece of text as soon as it
    /// is complete UTF-8 (a character split over several tokens arrives whole); `onText`
    /// answering `.stop` ends generation (Ctrl-C, the app). Stops also at a stop token
    /// (`stopTokens(extra:)`), at one of `options.stopStrings` (which is not shown), after
    /// `parameters.maxTokens`, when the context is full, or when `cancel` is cancelled;
    /// `options.constraint` limits the tokens (structured output), `options.drafter` proposes
    /// tokens to verify (speculative decoding; the same tokens greedy), else
    /// `options.speculation`'s prompt-lookup drafter when it is on. The context is
    /// `options.maxContext` when given (`--max-kv-size`), else the model's positions, at most
    /// `InferenceSession.defaultContextLimit` unless the prompt and `maxTokens` need more; a
    /// prompt that leaves no room in it for one token is `RunError.promptDoesNotFit`.
    public func generate(
        _ prompt: RunPrompt, parameters: GenerationParameters,
        options: GenerateOptions = GenerateOptions(), cancel: CancellationToken? = nil,
        onText: (String) -> GenerationDisposition
    ) throws -> RunOutcome {
        try generatePieces(prompt, parameters: parameters, options: options, cancel: cancel) {
            $0.text.isEmpty ? .more : onText($0.text)
        }
    }

    /// As above, but `onPiece` sees every generated token with the text it completed (often
    /// empty: the first bytes of a character, or text held back while it may begin a stop
    /// string), then, if anything was held back at the end, that text with no token.
    /// `run --json --stream` prints one line per call.
    public func generatePieces(
        _ prompt: RunPrompt, parameters: GenerationParameters,
        options: GenerateOptions = GenerateOptions(), cancel: CancellationToken? = nil,
        onPiece: (GeneratedPiece) -> GenerationDisposition
    ) throws -> RunOutcome {
        let ids = try encode(prompt, useChatTemplate: options.useChatTemplate)
        let stops = try stopTokens(extra: options.extraStopTokens)
        try parameters.validate()
        let context = try Self.context(
            maxPositions: model.maxPositions, promptTokens: ids.count,
            maxTokens: parameters.maxTokens, requested: options.maxContext)
        let session = try makeSession(maxContext: context, cacheWidth: options.cacheWidth)
        var text = ""
        let outcome = try PhiEngine.generate(
            session: session, prompt: ids, parameters: parameters, stopTokens: stops,
            hooks: hooks(
                stopStrings: options.stopStrings, constraint: options.constraint,
                drafter: options.drafter, speculation: options.speculation),
            cancel: cancel
        ) { token in
            text += token.text
            return onPiece(GeneratedPiece(token: token.id, text: token.text))
        }
        if outcome.stopReason != .stopString {
            let rest = outcome.heldText
            text += rest
            if !rest.isEmpty { _ = onPiece(GeneratedPiece(token: nil, text: rest)) }
        }
        var result = RunOutcome(
            model: location.name, text: text, generation: outcome, loadSeconds: loadSeconds,
            threads: session.threads, peakMemoryBytes: Self.peakMemoryBytes())
        result.contextTokens = session.maxContext
        result.weights = model.residentWeightFiles > 0 ? "copied" : "mapped"
        return result
    }

    /// What run and chat hook into a reply: its text with `stopStrings` held back, the
    /// constraint, and `drafter` (without one, `speculation`'s prompt-lookup drafter).
    func hooks(
        stopStrings: [String], constraint: (any TokenConstraint)?,
        drafter: (any TokenDrafter)?, speculation: Speculation
    ) -> GenerationHooks {
        let drafting = speculation.hooks(drafter: drafter)
        return GenerationHooks(
            text: ReplyText(tokenizer: tokenizer, stopStrings: stopStrings),
            constraint: constraint, drafter: drafting.drafter, draftLength: drafting.draftLength)
    }

    /// A session of its own on the process's shared worker pool, holding up to `maxContext`
    /// positions (default: `defaultContext`) with keys and values `cacheWidth` wide, its
    /// products at the container's `activationWidth`, corrected by the default adapter.
    public func makeSession(
        maxContext: Int? = nil, cacheWidth: KVCacheWidth = .defaultForRun
    ) throws -> InferenceSession {
        let session = try InferenceSession(
            model: model, maxContext: defaultContext(maxContext), cacheWidth: cacheWidth,
            activationWidth: activationWidth)
        session.adapter = defaultAdapter
        return session
    }

    /// The context `run` gives a prompt: `requested` (`--max-kv-size`), else the model's
    /// positions, at most `InferenceSession.defaultContextLimit` unless the prompt and its answer need more (`maxTokens` may be
    /// huge: `-m` means "at most"). The prompt must leave room for one generated token.
    static func context(
        maxPositions: Int, promptTokens: Int, maxTokens: Int, requested: Int?
    ) throws(RunError) -> Int {
        if let requested, !(1...maxPositions).contains(requested) {
            throw .contextOutOfRange(requested: requested, positions: maxPositions)
        }
        let needed = promptTokens + min(maxTokens, maxPositions)
        let context = requested ?? min(maxPositions, max(InferenceSession.defaultContextLimit, needed))
        guard promptTokens < context else {
            throw .promptDoesNotFit(
                tokens: promptTokens, context: context, positions: maxPositions,
                requested: requested != nil)
        }
        return context
    }

    /// The process's peak resident memory (getrusage; kilobytes on Linux, bytes on macOS).
    static func peakMemoryBytes() -> Int {
        #if canImport(Glibc)
            let who = __rusage_who_t(RUSAGE_SELF.rawValue)
        #else
            let who = RUSAGE_SELF
        #endif
        var usage = rusage()
        guard getrusage(who, &usage) == 0 else { return 0 }
        #if canImport(Darwin)
            return Int(usage.ru_maxrss)
        #else
            return Int(usage.ru_maxrss) * 1024
        #endif
    }
}

/// One step of a reply as `generate(onPiece:)` reports it: the token generated (nil for text
/// held back until the end) and the text it completed.
public struct GeneratedPiece: Sendable, Equatable, Encodable {
    public var token: Int?
    public var text: String
}

/// The reply and the figures `phikit run --stats` / `--json` show (speeds as mlx-lm and
/// llama.cpp split them: prompt processing, then generation).
public struct RunOutcome: Sendable, Encodable {
    public var model: String
    public var text: String
    /// Generated token ids, without the stop token.
    public var tokens: [Int]
    public var promptTokens: Int
    public var stopReason: String
    public var promptSeconds: Double
    public var promptTokensPerSecond: Double
    /// Tokens generated (stop token excluded).
    public var generationTokens: Int
    /// Time from the first token to the last.
    public var generationSeconds: Double
    /// Tokens per second after the first token (llama.cpp's eval rate; with speculative
    /// decoding several tokens may come from one forward pass).
    public var generationTokensPerSecond: Double
    public var timeToFirstToken: Double
    public var loadSeconds: Double
    /// How the weights were held: "mapped" (the page cache's 2 MiB pages) or "copied" (the
    /// page cache held them in small pages, or the caller asked: `WeightPlacement`).
    public var weights = "mapped"
    public var peakMemoryBytes: Int
    public var threads: Int
    /// Positions the context held (not in the JSON: `stop_reason` says when it was full).
    public var contextTokens = 0
    /// Speculative decoding: tokens drafted, and how many of them were kept.
    public var draftedTokens: Int
    public var acceptedDraftTokens: Int

    init(
        model: String, text: String, generation g: GenerationOutcome, loadSeconds: Double,
        threads: Int, peakMemoryBytes: Int
    ) {
        self.model = model
        self.text = text
        tokens = g.tokens
        promptTokens = g.promptTokens
        stopReason = g.stopReason.rawValue
        promptSeconds = g.promptSeconds
        promptTokensPerSecond = g.promptTokensPerSecond
        generationTokens = g.tokens.count
        generationSeconds = g.decodeSeconds
        generationTokensPerSecond = g.generationTokensPerSecond
        timeToFirstToken = g.timeToFirstToken
        draftedTokens = g.draftedTokens
        acceptedDraftTokens = g.acceptedDraftTokens
        self.loadSeconds = loadSeconds
        self.peakMemoryBytes = peakMemoryBytes
        self.threads = threads
    }

    enum CodingKeys: String, CodingKey {
        case model, text, tokens, threads
        case promptTokens = "prompt_tokens"
        case stopReason = "stop_reason"
        case promptSeconds = "prompt_seconds"
        case promptTokensPerSecond = "prompt_tokens_per_second"
        case generationTokens = "generation_tokens"
        case generationSeconds = "generation_seconds"
        case generationTokensPerSecond = "generation_tokens_per_second"
        case timeToFirstToken = "time_to_first_token"
        case loadSeconds = "load_seconds"
        case weights
        case peakMemoryBytes = "peak_memory_bytes"
        case draftedTokens = "drafted_tokens"
        case acceptedDraftTokens = "accepted_draft_tokens"
    }
}

/// What `run` refuses about a model or its options.
public enum RunError: UserFacingError, Equatable {
    case tokenizerDoesNotFit(directory: String, tokens: Int, embedding: Int)
    case systemNeedsTemplate(directory: String)
    case unknownStopToken(String)
    case noPrompt(model: String)
    /// Refused by size before tokenizing: more bytes than any tokenization fits in the context.
    case promptTooLong(bytes: Int, positions: Int)
    /// The prompt's tokens leave no room for an answer in the context (`requested`: the
    /// context is `--max-kv-size`, which may be raised up to `positions`).
    case promptDoesNotFit(tokens: Int, context: Int, positions: Int, requested: Bool)
    /// `--max-kv-size` beyond the model's positions, or below 1.
    case contextOutOfRange(requested: Int, positions: Int)
    /// Two run-time adapters under one name: a request could not tell them apart.
    case duplicateAdapterName(String)

    public var message: String {
        switch self {
        case .tokenizerDoesNotFit(let directory, let tokens, let embedding):
            "\(directory): the tokenizer has \(tokens) tokens but the model's embedding only "
                + "\(embedding) rows"
        case .systemNeedsTemplate(let directory):
            "\(directory) has no chat template, so it takes no system message"
        case .unknownStopToken(let token):
            "'\(token)' is neither a token of this tokenizer nor a token id"
        case .noPrompt(let model):
            "no prompt for \(model): give it after the model, with -p or -f, or on stdin"
        case .promptTooLong(let bytes, let positions):
            "the prompt is \(bytes) bytes: far more than the model's \(positions) positions hold"
        case .promptDoesNotFit(let tokens, let context, _, let requested):
            "the prompt is \(tokens) tokens, but the context "
                + (requested ? "(--max-kv-size \(context)) " : "") + "holds \(context) "
                + "and the answer needs at least 1 more"
        case .contextOutOfRange(let requested, let positions):
            "--max-kv-size \(requested) is outside 1...\(positions), the model's positions"
        case .duplicateAdapterName(let name):
            "two adapters are named '\(name)'"
        }
    }

    public var hint: String? {
        switch self {
        case .tokenizerDoesNotFit: "tokenizer.json belongs to another model"
        case .systemNeedsTemplate: "put the instructions in the prompt, or drop --system"
        case .unknownStopToken: "give the token as it is written in tokenizer.json, e.g. <|end|>"
        case .noPrompt: nil
        case .promptTooLong: "shorten the prompt"
        case .promptDoesNotFit(let tokens, _, let positions, let requested):
            tokens < positions
                ? "raise --max-kv-size to at least \(tokens + 1) (the model allows \(positions))"
                    + (requested ? "" : ", or shorten the prompt")
                : "shorten the prompt: the model holds at most \(positions) tokens"
        case .contextOutOfRange: "give a --max-kv-size the model allows"
        case .duplicateAdapterName: "give each --adapter a name of its own (NAME=DIR)"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .tokenizerDoesNotFit: .dataError
        case .systemNeedsTemplate, .unknownStopToken, .noPrompt, .promptTooLong,
            .promptDoesNotFit, .contextOutOfRange, .duplicateAdapterName:
            .usage
        }
    }
}

/// Generation stopped by Ctrl-C; what was generated has been printed.
public struct RunInterrupted: UserFacingError, Equatable {
    public var tokens: Int
    public init(tokens: Int) { self.tokens = tokens }
    public var message: String { "interrupted after \(tokens) tokens" }
    public var exitCode: ExitCode { .interrupted }
}

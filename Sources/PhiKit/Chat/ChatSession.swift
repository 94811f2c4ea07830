import Foundation
import PhiEngine
import PhiFormats
import PhiText

/// A conversation with a loaded model that keeps its KV cache between turns: the library
/// half of `phikit chat`, for apps that embed a chat.
///
/// Every turn renders the whole history through the model's chat template (as a fresh
/// `run --chat` would) and hands the engine the full token sequence; the engine reuses the
/// longest prefix its cache already holds and prefills only the rest. So an answer is exactly
/// the one a fresh run on the same conversation gives, only sooner.
///
///     let chat = try ChatSession(container: container, options: ChatOptions(system: "Be brief."))
///     let reply = try chat.send("Hi") { print($0, terminator: "") }
public final class ChatSession {
    public let container: ModelContainer
    public var history: ChatHistory
    public var parameters: GenerationParameters
    /// Positions the KV cache holds: the conversation plus the answer must fit.
    public let maxContext: Int
    public let stopStrings: [String]
    /// Speculative decoding for every answer (`--no-speculative`, `--draft-max`).
    public var speculation: Speculation
    /// The last turn's figures.
    public private(set) var lastReply: ChatReply?

    private let session: InferenceSession
    private let stopTokens: StopTokens
    /// Prompts' KV caches on disk: a loaded conversation resumes without recomputing.
    private let diskCache: DiskPrefixCache?

    public init(container: ModelContainer, options: ChatOptions = ChatOptions()) throws {
        guard container.chatTemplate != nil else {
            throw ChatPromptError.noChatTemplate(directory: container.location.directory)
        }
        self.container = container
        history = options.history ?? ChatHistory()
        if let system = options.system { history.system = system }
        let parameters = container.parameters(options.settings, for: .chat)
        try parameters.validate()
        self.parameters = parameters
        stopStrings = options.stopStrings
        speculation = options.speculation
        stopTokens = try container.stopTokens(extra: options.extraStopTokens)
        let positions = container.model.maxPositions
        if let requested = options.maxContext, requested > positions || requested < 1 {
            throw ChatError.contextTooLarge(requested: requested, positions: positions)
        }
        maxContext = container.defaultContext(options.maxContext)
        session = try container.makeSession(maxContext: maxContext, cacheWidth: options.cacheWidth)
        diskCache = options.diskCache
    }

    /// Sends `text` as the user's next message and streams the answer to `onText` (whole
    /// UTF-8, stop strings withheld). `trimmed` hears how many old messages were dropped to
    /// make room, before the answer starts. When `cancel` is cancelled (Ctrl-C, the app), the
    /// answer stops after the current token, stays in the history marked cut, and the reply
    /// says so. `constraint` and `drafter` are this answer's (see `ModelContainer.generate`).
    ///
    /// A message that cannot fit even alone throws `ChatError.messageTooLong` and leaves the
    /// history as it was.
    @discardableResult
    public func send(
        _ text: String, constraint: (any TokenConstraint)? = nil,
        drafter: (any TokenDrafter)? = nil, cancel: CancellationToken? = nil,
        trimmed: (Int) -> Void = { _ in }, onText: (String) -> Void
    ) throws -> ChatReply {
        history.append(role: "user", content: text)
        let ids: [Int]
        let dropped: Int
        do {
            (ids, dropped) = try fittedPrompt()
        } catch {
            history.removeLast()
            throw error
        }
        if dropped > 0 { trimmed(dropped) }
        var answer = ""
        diskCache?.restoreLongestPrefix(of: ids, into: session)
        let outcome = try PhiEngine.generate(
            session: session, sequence: ids, parameters: parameters, stopTokens: stopTokens,
            hooks: container.hooks(
                stopStrings: stopStrings, constraint: constraint, drafter: drafter,
                speculation: speculation),
            cancel: cancel
        ) { token in
            answer += token.text
            if !token.text.isEmpty { onText(token.text) }
            return .more
        }
        diskCache?.storeInBackground(prompt: ids, from: session, reused: outcome.reusedPromptTokens)
        answer += outcome.heldText
        if !outcome.heldText.isEmpty { onText(outcome.heldText) }
        let isCut = outcome.stopReason == .cancelled
        history.append(role: "assistant", content: answer, isCut: isCut)
        let reply = ChatReply(
            text: answer, isCut: isCut, stoppedByString: outcome.stopReason == .stopString,
            droppedMessages: dropped, promptTokens: ids.count,
            reusedTokens: outcome.reusedPromptTokens,
            generation: outcome)
        lastReply = reply
        return reply
    }

    /// Forgets the turns (and the cache stays: the system message's tokens are reused).
    public func reset() { history.clear() }

    /// The prompt of the history as it stands, after dropping the oldest turns until it and
    /// the answer's `maxTokens` fit the context (never the system message, never the new
    /// message). Returns the ids and how many messages went.
    private func fittedPrompt() throws -> (ids: [Int], dropped: Int) {
        let (dropped, ids) = try history.dropOldestTurns { kept in
            let ids = try container.encode(.chat(kept.messages))
            return (ids.count + parameters.maxTokens <= maxContext, ids)
        }
        // Nothing left to drop: go on if the message fits with some room to answer.
        guard ids.count < maxContext else {
            throw ChatError.messageTooLong(tokens: ids.count, context: maxContext)
        }
        return (ids, dropped)
    }
}

/// How a `ChatSession` starts. Settings left nil come from the model: flag > registry entry
/// > generation_config.json > chat's built-in (0.6, 1024 tokens); see
/// `ModelContainer.parameters(_:for:)`. The context is `run`'s default.
public struct ChatOptions: Sendable {
    public var system: String? = nil
    /// A conversation to continue (`--load`).
    public var history: ChatHistory? = nil
    public var settings = GenerationSettings()
    public var maxContext: Int? = nil
    public var stopStrings: [String] = []
    public var extraStopTokens: [String] = []
    /// Width of the cached keys and values (`--kv-bits`).
    public var cacheWidth = KVCacheWidth.defaultForRun
    public var speculation = Speculation.default
    /// Where computed prompts' KV caches are kept across runs (`--cache-dir`), made for this
    /// model and `cacheWidth`; nil: memory only.
    public var diskCache: DiskPrefixCache? = nil

    /// Every other setting at its default; set the ones wanted on the value.
    public init(system: String? = nil) {
        self.system = system
    }
}

/// One answer and its figures (`--stats`, `/stats`).
public struct ChatReply: Sendable {
    public var text: String
    /// Stopped early by the user (not by a stop token, a stop string or the length limit).
    public var isCut: Bool
    public var stoppedByString: Bool
    /// Old messages dropped before this turn to fit the context.
    public var droppedMessages: Int
    /// The whole rendered conversation, and how much of it the cache already held.
    public var promptTokens: Int
    public var reusedTokens: Int
    public var generation: GenerationOutcome

    public var newPromptTokens: Int { promptTokens - reusedTokens }
}

public enum ChatError: UserFacingError, Equatable {
    case messageTooLong(tokens: Int, context: Int)
    case contextTooLarge(requested: Int, positions: Int)

    public var message: String {
        switch self {
        case .messageTooLong(let tokens, let context):
            "the message is \(tokens) tokens with the template, but the context holds \(context)"
        case .contextTooLarge(let requested, let positions):
            "--max-kv-size \(requested) is outside 1...\(positions), the model's positions"
        }
    }

    public var hint: String? {
        switch self {
        case .messageTooLong: "shorten it, or give a larger --max-kv-size"
        case .contextTooLarge: nil
        }
    }

    public var exitCode: ExitCode { .usage }
}

import Foundation
import PhiFormats

/// What the per-token callback wants next (MLX Swift's `GenerateDisposition`).
public enum GenerationDisposition: Sendable {
    case more
    case stop
}

/// Why generation ended.
public enum StopReason: String, Sendable {
    /// A stop token came (it is not part of `tokens`).
    case endOfSequence = "eos"
    case maxTokens = "max_tokens"
    /// The KV cache is full.
    case contextFull = "context_full"
    /// The callback answered `.stop` (the app) or the job's `CancellationToken` was
    /// cancelled (Ctrl-C, a client that left).
    case cancelled
    /// A stop string appeared in the text (it is not part of the text).
    case stopString = "stop_string"
    /// The `TokenConstraint` is complete: nothing may follow.
    case constraintComplete = "constraint_complete"
}

/// The tokens and the timings of one `generate` call. Speeds follow llama.cpp's and
/// mlx-lm's split: prompt processing (prefill), then generation (one forward pass per token).
public struct GenerationOutcome: Sendable {
    /// Generated token ids, without the stop token.
    public var tokens: [Int]
    public var stopReason: StopReason
    /// Tokens of the prompt (the whole sequence, for `generate(session:sequence:…)`).
    public var promptTokens: Int
    /// Of those, the tokens the session's cache already held and did not compute again.
    public var reusedPromptTokens: Int
    /// Time to process the prompt (up to its logits).
    public var promptSeconds: Double
    /// From the call until the first token was chosen.
    public var timeToFirstToken: Double
    /// Tokens computed after the first token (one per further token, the stop token's
    /// included; a forward pass each, or several in one when drafted tokens are kept): what
    /// decode speed counts.
    public var decodeSteps: Int
    /// Time from the first token to the last.
    public var decodeSeconds: Double
    /// Text the `GeneratedText` still held when generation ended (an unfinished character,
    /// text that might have begun a stop string), not reported through `onToken`.
    public var heldText = ""
    /// Tokens a `TokenDrafter` proposed, and how many of them were kept.
    public var draftedTokens = 0
    public var acceptedDraftTokens = 0

    public var promptTokensPerSecond: Double {
        promptSeconds > 0 ? Double(promptTokens) / promptSeconds : 0
    }

    /// Decode speed: tokens per second after the first token.
    public var generationTokensPerSecond: Double {
        decodeSeconds > 0 ? Double(decodeSteps) / decodeSeconds : 0
    }
}

/// What a `Generator` plugs in besides the parameters: each is optional, and each is one
/// sequence's own (a constraint or a drafter keeps state).
public struct GenerationHooks {
    /// Visible text and stop strings (PhiKit passes PhiText's `ReplyText`).
    public var text: (any GeneratedText)?
    public var constraint: (any TokenConstraint)?
    public var drafter: (any TokenDrafter)?
    /// Drafted tokens verified per step at most.
    public var draftLength: Int
    /// Alternatives per token in `GeneratedToken.logprobs` (nil: no log-probabilities).
    public var logprobs: Int?

    public init(
        text: (any GeneratedText)? = nil, constraint: (any TokenConstraint)? = nil,
        drafter: (any TokenDrafter)? = nil, draftLength: Int = 4, logprobs: Int? = nil
    ) {
        self.text = text
        self.constraint = constraint
        self.drafter = drafter
        self.draftLength = draftLength
        self.logprobs = logprobs
    }
}

/// Generates after `prompt` (appended to what `session` holds), calling `onToken` with each
/// new token as soon as it is chosen; stops at a stop token (unless `ignoreEOS`), after
/// `maxTokens`, when the context is full, when `onToken` answers `.stop`, or when `cancel` is
/// cancelled (checked before each forward pass).
///
/// Throws `GenerationError` for unusable parameters and `SessionError` when the prompt does
/// not fit (too long, a token outside the vocabulary, empty on an empty session).
public func generate(
    session: InferenceSession, prompt: [Int], parameters: GenerationParameters,
    stopTokens: StopTokens, cancel: CancellationToken? = nil,
    onToken: (Int) -> GenerationDisposition
) throws -> GenerationOutcome {
    try generate(
        session: session, prompt: prompt, parameters: parameters, stopTokens: stopTokens,
        hooks: GenerationHooks(), cancel: cancel
    ) { onToken($0.id) }
}

/// As above, with `hooks` (text and stop strings, a constraint, a drafter, log-probabilities):
/// `onToken` sees each token with the text it made visible. A stop string ends generation
/// (`StopReason.stopString`); the token that completed it is in the outcome's tokens but is
/// reported only when it showed text (what came before the stop string). Text still held
/// back at the end is `GenerationOutcome.heldText`.
public func generate(
    session: InferenceSession, prompt: [Int], parameters: GenerationParameters,
    stopTokens: StopTokens, hooks: GenerationHooks, cancel: CancellationToken? = nil,
    onToken: (GeneratedToken) -> GenerationDisposition
) throws -> GenerationOutcome {
    try drive(
        session: session, promptTokens: prompt.count, parameters: parameters,
        stopTokens: stopTokens, hooks: hooks, cancel: cancel, onToken: onToken
    ) { (try session.prefill(prompt), 0) }
}

/// Generates after exactly `sequence` (a whole conversation rendered again): the session
/// keeps the longest prefix of it its cache holds and computes only the rest
/// (`InferenceSession.prepare`); `GenerationOutcome.reusedPromptTokens` says how much was
/// kept. Otherwise as `generate(session:prompt:…)`.
public func generate(
    session: InferenceSession, sequence: [Int], parameters: GenerationParameters,
    stopTokens: StopTokens, hooks: GenerationHooks = GenerationHooks(),
    cancel: CancellationToken? = nil, onToken: (GeneratedToken) -> GenerationDisposition
) throws -> GenerationOutcome {
    try drive(
        session: session, promptTokens: sequence.count, parameters: parameters,
        stopTokens: stopTokens, hooks: hooks, cancel: cancel, onToken: onToken
    ) {
        let reused = try session.prepare(sequence)
        return (session.logits, reused)
    }
}

/// The loop every entry point shares: one `Generator` fed by one session. `prefill` computes
/// the prompt and returns its last logits and how many of its tokens were reused.
private func drive(
    session: InferenceSession, promptTokens: Int, parameters: GenerationParameters,
    stopTokens: StopTokens, hooks: GenerationHooks, cancel: CancellationToken?,
    onToken: (GeneratedToken) -> GenerationDisposition,
    prefill: () throws -> (UnsafeBufferPointer<Float>, Int)
) throws -> GenerationOutcome {
    try parameters.validate()
    let start = monotonicSeconds()
    let (logits, reused) = try prefill()
    let prefilled = monotonicSeconds()
    let generator = Generator(
        parameters: parameters, vocabularySize: session.model.vocabularySize,
        stopTokens: stopTokens, context: session.tokens, maxContext: session.maxContext,
        text: hooks.text, constraint: hooks.constraint, drafter: hooks.drafter,
        logprobs: hooks.logprobs)

    var outcome = GenerationOutcome(
        tokens: [], stopReason: .maxTokens, promptTokens: promptTokens,
        reusedPromptTokens: reused, promptSeconds: prefilled - start, timeToFirstToken: 0,
        decodeSteps: 0, decodeSeconds: 0)
    outcome.tokens.reserveCapacity(min(parameters.maxTokens, session.maxContext))
    var step = try generator.step(logits)
    let firstTokenAt = monotonicSeconds()
    outcome.timeToFirstToken = firstTokenAt - start
    while true {
        var reason = step.finish
        for (i, token) in step.tokens.enumerated() {
            outcome.tokens.append(token.id)
            // The token that completed a stop string shows only the text before it, if any.
            let completesStop = reason == .stopString && i == step.tokens.count - 1
            if completesStop && token.text.isEmpty { break }
            if onToken(token) == .stop || cancel?.isCancelled == true {
                if reason != .stopString { reason = .cancelled }
                break
            }
        }
        if let reason {
            outcome.stopReason = reason
            break
        }
        let fed = Array(step.ids.dropFirst(step.acceptedDraft))
        let draft = generator.draft(
            limit: min(hooks.draftLength, session.maxVerifyTokens - fed.count))
        if draft.isEmpty {
            let next = fed.count == 1 ? try session.step(fed[0]) : try session.prefill(fed)
            step = try generator.step(next)
        } else {
            // one forward pass for the fed tokens and the draft; the rows from the last fed
            // token on are what the generator checks the draft against (only those are
            // computed: a forced run before the draft needs none)
            let rows = try session.verify(fed + draft, lastRows: draft.count + 1)
            step = try generator.verify(draft: draft, logits: (0...draft.count).map { rows[$0] })
            session.rewind(to: session.position - draft.count + step.acceptedDraft)
            outcome.draftedTokens += draft.count
            outcome.acceptedDraftTokens += step.acceptedDraft
        }
        outcome.decodeSteps += fed.count + step.acceptedDraft
    }
    outcome.decodeSeconds = outcome.decodeSteps > 0 ? monotonicSeconds() - firstTokenAt : 0
    outcome.heldText = generator.finishText()
    return outcome
}

/// Seconds on a monotonic clock (no allocation, unlike Date).
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

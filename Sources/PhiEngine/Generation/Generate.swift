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
    /// The callback answered `.stop` (a stop string, the app) or the job's
    /// `CancellationToken` was cancelled (Ctrl-C, a client that left).
    case cancelled
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
    /// Forward passes after the first token (one per further token, the stop token's
    /// included): what decode speed counts.
    public var decodeSteps: Int
    /// Time from the first token to the last.
    public var decodeSeconds: Double

    public var promptTokensPerSecond: Double {
        promptSeconds > 0 ? Double(promptTokens) / promptSeconds : 0
    }

    /// Decode speed: forward passes per second after the first token.
    public var generationTokensPerSecond: Double {
        decodeSeconds > 0 ? Double(decodeSteps) / decodeSeconds : 0
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
        session: session, promptTokens: prompt.count, parameters: parameters,
        stopTokens: stopTokens, cancel: cancel, onToken: onToken
    ) { (try session.prefill(prompt), 0) }
}

/// Generates after exactly `sequence` (a whole conversation rendered again): the session
/// keeps the longest prefix of it its cache holds and computes only the rest
/// (`InferenceSession.prepare`); `GenerationOutcome.reusedPromptTokens` says how much was
/// kept. Otherwise as `generate(session:prompt:…)`.
public func generate(
    session: InferenceSession, sequence: [Int], parameters: GenerationParameters,
    stopTokens: StopTokens, cancel: CancellationToken? = nil,
    onToken: (Int) -> GenerationDisposition
) throws -> GenerationOutcome {
    try generate(
        session: session, promptTokens: sequence.count, parameters: parameters,
        stopTokens: stopTokens, cancel: cancel, onToken: onToken
    ) {
        let reused = try session.prepare(sequence)
        return (session.logits, reused)
    }
}

/// The loop both entry points share; `prefill` computes the prompt and returns its last
/// logits and how many of its tokens were reused.
private func generate(
    session: InferenceSession, promptTokens: Int, parameters: GenerationParameters,
    stopTokens: StopTokens, cancel: CancellationToken?,
    onToken: (Int) -> GenerationDisposition,
    prefill: () throws -> (UnsafeBufferPointer<Float>, Int)
) throws -> GenerationOutcome {
    try parameters.validate()
    let sampler = Sampler(parameters: parameters, vocabularySize: session.model.vocabularySize)
    let start = monotonicSeconds()
    var (logits, reused) = try prefill()
    let prefilled = monotonicSeconds()

    var outcome = GenerationOutcome(
        tokens: [], stopReason: .maxTokens, promptTokens: promptTokens,
        reusedPromptTokens: reused, promptSeconds: prefilled - start, timeToFirstToken: 0,
        decodeSteps: 0, decodeSeconds: 0)
    outcome.tokens.reserveCapacity(min(parameters.maxTokens, session.maxContext))
    var firstTokenAt = prefilled
    while true {
        let token = sampler.sample(logits, history: session.tokens)
        if outcome.tokens.isEmpty && outcome.decodeSteps == 0 {
            firstTokenAt = monotonicSeconds()
            outcome.timeToFirstToken = firstTokenAt - start
        }
        if !parameters.ignoreEOS && stopTokens.contains(token) {
            outcome.stopReason = .endOfSequence
            break
        }
        outcome.tokens.append(token)
        if onToken(token) == .stop || cancel?.isCancelled == true {
            outcome.stopReason = .cancelled
            break
        }
        if outcome.tokens.count >= parameters.maxTokens {
            outcome.stopReason = .maxTokens
            break
        }
        if session.position >= session.maxContext {
            outcome.stopReason = .contextFull
            break
        }
        logits = try session.step(token)
        outcome.decodeSteps += 1
    }
    outcome.decodeSeconds = outcome.decodeSteps > 0 ? monotonicSeconds() - firstTokenAt : 0
    return outcome
}

/// Seconds on a monotonic clock (no allocation, unlike Date).
public func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

import Foundation

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
    /// The callback answered `.stop` (Ctrl-C, a stop string, the app).
    case cancelled
}

/// The tokens and the timings of one `generate` call. Speeds follow llama.cpp's and
/// mlx-lm's split: prompt processing (prefill), then generation (one forward pass per token).
public struct GenerationOutcome: Sendable {
    /// Generated token ids, without the stop token.
    public var tokens: [Int]
    public var stopReason: StopReason
    public var promptTokens: Int
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
/// `maxTokens`, when the context is full, or when `onToken` answers `.stop`.
///
/// Throws `GenerationError` for unusable parameters and `SessionError` when the prompt does
/// not fit (too long, a token outside the vocabulary, empty on an empty session).
public func generate(
    session: InferenceSession, prompt: [Int], parameters: GenerationParameters,
    stopTokens: StopTokens, onToken: (Int) -> GenerationDisposition
) throws -> GenerationOutcome {
    try parameters.validate()
    let sampler = Sampler(parameters: parameters, vocabularySize: session.model.vocabularySize)
    let start = monotonicSeconds()
    var logits = try session.prefill(prompt)
    let prefilled = monotonicSeconds()

    var outcome = GenerationOutcome(
        tokens: [], stopReason: .maxTokens, promptTokens: prompt.count,
        promptSeconds: prefilled - start, timeToFirstToken: 0, decodeSteps: 0, decodeSeconds: 0)
    // At most what the context can still hold: a huge `maxTokens` aborted on allocation.
    outcome.tokens.reserveCapacity(
        min(parameters.maxTokens, max(0, session.maxContext - session.position) + 1))
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
        if onToken(token) == .stop {
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
func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) * 1e-9
}

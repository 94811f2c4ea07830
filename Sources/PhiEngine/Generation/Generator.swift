/// One token a `Generator` chose and what it made visible.
public struct GeneratedToken: Sendable, Equatable {
    public var id: Int
    /// The text this token made visible ("" while a character is unfinished or text might
    /// begin a stop string; "" too without a `GeneratedText`).
    public var text: String
    /// Where the token's text starts among the reply's decoded UTF-8 bytes.
    public var textOffset: Int
    /// Asked for with `logprobs:`; nil for a forced token (no logits were computed for it).
    public var logprobs: TokenLogprobs?
    /// Fed by a `TokenConstraint` without sampling.
    public var isForced: Bool
}

/// What one `Generator` step decided.
public struct GeneratorStep: Sendable {
    /// The new tokens, in order (an end token is never among them).
    public var tokens: [GeneratedToken] = []
    /// Why generation ended; nil: feed `tokens[acceptedDraft...]` and step again.
    public var finish: StopReason?
    /// After `verify`: how many drafted tokens were kept. They are `tokens[0..<acceptedDraft]`
    /// and already in the cache (they were fed to compute the logits); rewind the cache to
    /// just after them.
    public var acceptedDraft = 0

    public var ids: [Int] { tokens.map(\.id) }
}

/// Decides one sequence's tokens from the model's logits: the constraint's mask, the
/// penalties, the sampler, stop tokens, stop strings, UTF-8-safe text, log-probabilities and
/// the finish reason, in one place. It never runs the model: a driver feeds the tokens of each
/// step and hands back the logits that follow — `generate` (run, chat, apps) alone, the
/// server's slots in batches. Same parameters, seed and logits: the same tokens, whoever
/// drives it.
///
/// Per chosen token the checks run in this order: end token (ends, not kept) → the token is
/// kept (text, constraint) → stop string → `maxTokens` → constraint complete → context full.
public final class Generator {
    public let parameters: GenerationParameters
    public let stopTokens: StopTokens
    public let constraint: (any TokenConstraint)?
    public let drafter: (any TokenDrafter)?
    /// The sequence: the context it started from, then every token generated.
    public private(set) var tokens: [Int]
    /// Tokens generated so far.
    public private(set) var generatedCount = 0
    /// Set once a step has ended generation.
    public private(set) var finishReason: StopReason?

    private let sampler: Sampler
    private let vocabularySize: Int
    private let maxContext: Int
    private let logprobs: Int?
    private var text: (any GeneratedText)?
    private var mask: TokenMask?
    /// How often each token was generated (presence and frequency penalties, when on).
    private var counts: [Int: Int] = [:]
    private let tracksCounts: Bool

    /// - Parameters:
    ///   - context: the tokens already in the sequence (the prompt, or the whole session),
    ///     what the repetition penalty looks back on.
    ///   - maxContext: positions the cache holds; a token that would not fit ends generation.
    ///   - text: turns tokens into visible text and finds stop strings (nil: no text).
    ///   - logprobs: how many alternatives to report per sampled token (nil: none).
    public init(
        parameters: GenerationParameters, vocabularySize: Int, stopTokens: StopTokens,
        context: [Int], maxContext: Int, text: (any GeneratedText)? = nil,
        constraint: (any TokenConstraint)? = nil, drafter: (any TokenDrafter)? = nil,
        logprobs: Int? = nil
    ) {
        self.parameters = parameters
        self.vocabularySize = vocabularySize
        self.stopTokens = stopTokens
        self.maxContext = maxContext
        self.text = text
        self.constraint = constraint
        self.drafter = drafter
        self.logprobs = logprobs
        tokens = context
        tracksCounts = parameters.presencePenalty != 0 || parameters.frequencyPenalty != 0
        sampler = Sampler(parameters: parameters, vocabularySize: vocabularySize)
        if constraint != nil { mask = TokenMask(vocabularySize: vocabularySize) }
    }

    /// Chooses the next token from the logits after the last token fed (then any forced
    /// run after it).
    public func step(_ logits: UnsafeBufferPointer<Float>) throws -> GeneratorStep {
        precondition(finishReason == nil, "the generator has finished")
        var step = GeneratorStep()
        try choose(logits, draft: nil, into: &step)
        return finished(step)
    }

    /// Drafted tokens to verify next (from the drafter, at most `limit` and what the length
    /// and the context leave); [] without a drafter. Feed the last step's tokens and these,
    /// then hand `verify` the logits of every position from the last step's last token on.
    /// In a batched step (`batch`: what the others bring), the drafter prices the draft there.
    public func draft(limit: Int, in batch: BatchDraftContext? = nil) -> [Int] {
        guard let drafter, finishReason == nil else { return [] }
        let room = min(
            limit, parameters.maxTokens - generatedCount, maxContext - tokens.count)
        guard room > 0 else { return [] }
        let proposed =
            batch.map { drafter.draft(after: tokens, limit: room, in: $0) }
            ?? drafter.draft(after: tokens, limit: room)
        return Array(proposed.prefix(room))
    }

    /// Verifies `draft` with the logits of `draft.count + 1` positions: `logits[i]` follows
    /// the last token fed before the draft and `draft[..<i]`. Keeps the longest agreeing
    /// prefix (greedy: the sampler's choice equals the draft; sampling: the acceptance rule
    /// of speculative sampling, `Sampler.verify`), then one token of the model's own: the
    /// correction at the first rejected position, or a token from the last logits when
    /// every drafted token was kept.
    public func verify(
        draft: [Int], logits: [UnsafeBufferPointer<Float>]
    ) throws -> GeneratorStep {
        precondition(finishReason == nil, "the generator has finished")
        precondition(logits.count == draft.count + 1, "one row of logits per drafted token, plus one")
        var step = GeneratorStep()
        for (i, token) in draft.enumerated() {
            let kept = try choose(logits[i], draft: token, into: &step)
            if step.finish != nil || !kept {
                drafter?.observe(drafted: draft.count, accepted: step.acceptedDraft)
                return finished(step)
            }
            step.acceptedDraft += 1
        }
        drafter?.observe(drafted: draft.count, accepted: step.acceptedDraft)
        try choose(logits[draft.count], draft: nil, into: &step)
        return finished(step)
    }

    /// Generation has ended: the text still held back (see `GeneratedText.finish`).
    public func finishText() -> String { text?.finish() ?? "" }

    /// Whether a stop string ended the text.
    public var stoppedByString: Bool { text?.isStopped ?? false }
    /// The stop string that ended the reply, when the text knows it.
    public var stopString: String? { text?.matchedStopString }

    private func finished(_ step: GeneratorStep) -> GeneratorStep {
        finishReason = step.finish
        return step
    }

    /// Chooses one token from `logits` (or verifies `draft` there) and keeps it, then the
    /// forced run after it. Returns whether `draft` was accepted (false without one).
    @discardableResult
    private func choose(
        _ logits: UnsafeBufferPointer<Float>, draft: Int?, into step: inout GeneratorStep
    ) throws -> Bool {
        if let constraint, constraint.isComplete {
            step.finish = .constraintComplete
            return false
        }
        let mask = currentMask()
        let token: Int
        var accepted = false
        if let draft {
            (token, accepted) = sampler.verify(
                draft: draft, logits, history: tokens, mask: mask, generated: counts)
        } else {
            token = sampler.sample(logits, history: tokens, mask: mask, generated: counts)
        }
        // A broken model's NaN logits leave no token to choose: every pick would be noise.
        if logits[token].isNaN { throw GenerationError.logitsNotANumber(generated: generatedCount) }
        if !parameters.ignoreEOS && stopTokens.contains(token) {
            step.finish = .endOfSequence
            return accepted
        }
        try keep(
            token, logprobs: logprobs.map { TokenLogprobs(logits: logits, chosen: token, top: $0) },
            forced: false, into: &step)
        if !accepted { try keepForcedRun(into: &step) }
        return accepted
    }

    /// The constraint's mask for the next token (end tokens allowed only when it can end).
    private func currentMask() -> TokenMask? {
        guard let constraint, var next = mask else { return nil }
        mask = nil  // unique while it is written: no copy
        next.forbidAll()
        // This token and those after it until maxTokens, or until the context is full (the
        // token that fills it is still kept).
        let budget = min(parameters.maxTokens - generatedCount, maxContext - tokens.count + 1)
        constraint.allow(&next, budget: budget)
        for id in stopTokens.ids { next[id] = constraint.canEnd }
        mask = next
        return next
    }

    /// The tokens the constraint forces after the last one, as far as length and context go.
    private func keepForcedRun(into step: inout GeneratorStep) throws {
        guard let constraint, step.finish == nil else { return }
        let room = min(parameters.maxTokens - generatedCount, maxContext - tokens.count)
        guard room > 0 else { return }
        for token in constraint.forcedTokens(limit: room).prefix(room) {
            try keep(token, logprobs: nil, forced: true, into: &step)
            if step.finish != nil { return }
        }
    }

    private func keep(
        _ token: Int, logprobs: TokenLogprobs?, forced: Bool, into step: inout GeneratorStep
    ) throws {
        let offset = text?.decodedByteCount ?? 0
        let piece = text?.append(token) ?? ""
        tokens.append(token)
        if tracksCounts { counts[token, default: 0] += 1 }
        generatedCount += 1
        try constraint?.advance(token)
        step.tokens.append(
            GeneratedToken(
                id: token, text: piece, textOffset: offset, logprobs: logprobs, isForced: forced))
        if text?.isStopped == true {
            step.finish = .stopString
        } else if generatedCount >= parameters.maxTokens {
            step.finish = .maxTokens
        } else if constraint?.isComplete == true {
            step.finish = .constraintComplete
        } else if tokens.count > maxContext {
            step.finish = .contextFull
        }
    }
}

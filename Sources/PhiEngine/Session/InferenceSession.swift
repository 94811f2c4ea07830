import CKernels

/// One sequence a model works on — a conversation, a server request — that lives across
/// calls: it owns the KV cache and the activation buffers (allocated once) and computes on a
/// shared `WorkerPool`. Feed tokens with `prefill` (a prompt, in blocks of tokens:
/// matrix-matrix work) and `step` (one token: matrix-vector work); both return the logits of
/// the last token, valid until the next call. `prepare` makes the session hold a new token
/// sequence, computing only what its cache lacks. Nothing is allocated per token.
///
/// Reuse is exact: a prompt block's result for each token does not depend on how the tokens
/// were grouped into blocks, so positions computed in prompt blocks are bit for bit what a
/// fresh prefill computes, and `prepare` reuses only those (`reusablePrefix`). A decode step
/// takes the single-token kernels, which round differently; `settle` recomputes the decoded
/// positions as a prompt block so that the next `prepare` can reuse them too.
///
/// LongRoPE models switch from the short to the long factors once the sequence is longer than
/// `original_max_position_embeddings`. As in transformers (`Phi3ForCausalLM.
/// prepare_inputs_for_generation`), the cached keys of the shorter sequence are then thrown
/// away and the whole sequence is processed again with the long factors.
public final class InferenceSession {
    public let model: any CausalLanguageModel
    /// Positions the KV cache holds.
    public let maxContext: Int
    /// Every token in the cache, in order (capacity reserved for `maxContext`).
    public private(set) var tokens: [Int] = []
    /// Tokens in the cache; the next token goes to this position.
    public var position: Int { tokens.count }
    /// Leading positions computed in prompt blocks of two or more tokens: what `prepare`
    /// may reuse.
    public private(set) var reusablePrefix = 0
    /// Threads the session computes with.
    public var threads: Int { pool.size }

    let sequence: any SequenceState
    let pool: WorkerPool
    /// The position regime (`CausalLanguageModel.positionRegime`) the cached keys are in.
    private(set) var regime = 0

    /// `maxContext` defaults to the model's positions, at most 4096 (the KV cache costs
    /// resident memory only as it fills, but its address space is reserved up front). The
    /// session computes on the process's shared pool.
    public convenience init(model: any CausalLanguageModel, maxContext: Int? = nil) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool.shared(threads: model.threads),
            block: 512)
    }

    /// A session on a pool of its own (tests pin threads and kernel levels); `block` is the
    /// prompt block size.
    convenience init(
        model: any CausalLanguageModel, maxContext: Int?, threads: Int, isa: Int32, block: Int
    ) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool(threads: threads, isa: isa),
            block: block)
    }

    init(model: any CausalLanguageModel, maxContext: Int?, pool: WorkerPool, block: Int) throws {
        let context = maxContext ?? min(model.maxPositions, 4096)
        guard context >= 1, context <= model.maxPositions else {
            throw SessionError.invalidContext(requested: context, maximum: model.maxPositions)
        }
        self.model = model
        self.maxContext = context
        self.pool = pool
        sequence = try model.makeSequenceState(
            capacity: context, block: max(1, min(block, context)), threads: pool.size)
        regime = model.positionRegime(sequenceLength: 0)
        tokens.reserveCapacity(context)
    }

    /// Processes `prompt` after what is cached; returns the logits (vocab) of its last token.
    public func prefill(_ prompt: [Int]) throws -> UnsafeBufferPointer<Float> {
        guard !prompt.isEmpty || position > 0 else { throw SessionError.emptyPrompt }
        return try feed(prompt)
    }

    /// Processes one token; returns the logits (vocab) that follow it.
    public func step(_ token: Int) throws -> UnsafeBufferPointer<Float> {
        try feed(CollectionOfOne(token))
    }

    /// Makes the session hold exactly `sequence`: keeps the longest prefix of it that the
    /// cache holds exactly (`reusablePrefix`, same position regime), recomputes the rest as
    /// prompt blocks, and returns how many tokens were reused. The logits of the sequence's
    /// last token follow in `logits`. On an error (context, vocabulary) the session is empty.
    @discardableResult
    public func prepare(_ sequence: [Int]) throws -> Int {
        guard !sequence.isEmpty else { throw SessionError.emptyPrompt }
        try checkFits(sequence, after: 0)
        var reuse = min(commonPrefixLength(with: sequence), reusablePrefix)
        if model.positionRegime(sequenceLength: sequence.count) != regime { reuse = 0 }
        // The last token is always recomputed (its logits are wanted), and a lone recomputed
        // token would take the single-token kernels: recompute at least two.
        reuse = max(0, min(reuse, sequence.count - 2))
        rewind(to: reuse)
        _ = try feed(sequence[reuse...])
        return reuse
    }

    /// How many leading tokens `sequence` shares with the cache.
    public func commonPrefixLength(with sequence: [Int]) -> Int {
        var n = 0
        let limit = min(sequence.count, tokens.count)
        while n < limit && sequence[n] == tokens[n] { n += 1 }
        return n
    }

    /// Forgets every position from `position` on (the buffers stay allocated).
    public func rewind(to position: Int) {
        let keep = max(0, min(position, tokens.count))
        tokens.removeSubrange(keep...)
        reusablePrefix = min(reusablePrefix, keep)
        if keep == 0 { regime = model.positionRegime(sequenceLength: 0) }
    }

    /// Empties the cache (the buffers stay allocated).
    public func reset() { rewind(to: 0) }

    /// Recomputes the positions decode steps computed as prompt blocks, so that a later
    /// `prepare` reuses them (a chat calls this after an answer). Changes `logits`.
    public func settle() throws {
        guard reusablePrefix < position else { return }
        let from = max(0, min(reusablePrefix, position - 2))
        let rest = Array(tokens[from...])
        rewind(to: from)
        _ = try feed(rest)
    }

    /// The logits of the last token processed.
    public var logits: UnsafeBufferPointer<Float> { sequence.logits }

    private func checkFits(_ new: some Collection<Int>, after start: Int) throws {
        guard start + new.count <= maxContext else {
            throw SessionError.contextFull(needed: start + new.count, limit: maxContext)
        }
        let vocab = model.vocabularySize
        if let bad = new.first(where: { $0 < 0 || $0 >= vocab }) {
            throw SessionError.tokenOutOfRange(token: bad, vocabularySize: vocab)
        }
    }

    private func feed(_ new: some Collection<Int>) throws -> UnsafeBufferPointer<Float> {
        try checkFits(new, after: position)
        var start = position
        tokens.append(contentsOf: new)
        let needed = model.positionRegime(sequenceLength: tokens.count)
        if needed != regime {
            regime = needed
            start = 0  // the cached keys were embedded in another regime: recompute
            reusablePrefix = 0
        }
        let block = sequence.block
        try pool.exclusively {
            try tokens.withUnsafeBufferPointer { all in
                while start < all.count {
                    var count = min(block, all.count - start)
                    // Never leave a last block of one token behind a longer one: a lone
                    // token would go through the single-token kernels and round differently.
                    if all.count - start - count == 1 && count > 2 { count -= 1 }
                    let blockTokens = UnsafeBufferPointer(rebasing: all[start..<start + count])
                    sequence.forward(
                        blockTokens, at: start, regime: regime,
                        logits: start + count == all.count, pool: pool)
                    if count >= 2 && start == reusablePrefix { reusablePrefix = start + count }
                    start += count
                }
            }
        }
        return logits
    }
}

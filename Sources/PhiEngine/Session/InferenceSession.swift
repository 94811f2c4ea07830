import CKernels

/// One sequence a model works on — a conversation, a server request — that lives across
/// calls: it owns the KV cache and the activation buffers (allocated once) and computes on a
/// shared `WorkerPool`. Feed tokens with `prefill` (a prompt, in blocks of tokens:
/// matrix-matrix work) and `step` (one token: matrix-vector work); both return the logits of
/// the last token, valid until the next call. `prepare` makes the session hold a new token
/// sequence, computing only what its cache lacks. Nothing is allocated per token.
///
/// Reuse is exact: the kernels compute each token the same way whether it comes alone (a
/// decode step) or in a block of any size, so every cached position is bit for bit what a
/// fresh prefill of the same tokens computes (tests hold the kernels and the session to it).
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
    /// Threads the session computes with.
    public var threads: Int { pool.size }
    /// How wide the cached keys and values are.
    public let cacheWidth: KVCacheWidth

    let sequence: any SequenceState
    let pool: WorkerPool
    /// The position regime (`BlockForwardModel.positionRegime`) the cached keys are in.
    private(set) var regime = 0
    /// The model's `positionRegime` (not part of the public model protocol: a LongRoPE detail).
    private let positionRegime: (Int) -> Int

    /// `maxContext` defaults to the model's positions, at most 4096 (the KV cache costs
    /// resident memory only as it fills, but its address space is reserved up front). The
    /// session computes on the process's shared pool.
    public convenience init(
        model: any CausalLanguageModel, maxContext: Int? = nil,
        cacheWidth: KVCacheWidth = .float32
    ) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool.shared(threads: model.threads),
            block: 512, cacheWidth: cacheWidth)
    }

    /// A session on a pool of its own (tests pin threads and kernel levels); `block` is the
    /// prompt block size.
    convenience init(
        model: any CausalLanguageModel, maxContext: Int?, threads: Int, isa: Int32, block: Int,
        cacheWidth: KVCacheWidth = .float32
    ) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool(threads: threads, isa: isa),
            block: block, cacheWidth: cacheWidth)
    }

    init(
        model: any CausalLanguageModel, maxContext: Int?, pool: WorkerPool, block: Int,
        cacheWidth: KVCacheWidth = .float32
    ) throws {
        let context = maxContext ?? min(model.maxPositions, 4096)
        guard context >= 1, context <= model.maxPositions else {
            throw SessionError.invalidContext(requested: context, maximum: model.maxPositions)
        }
        self.model = model
        self.maxContext = context
        self.pool = pool
        self.cacheWidth = cacheWidth
        if let blockModel = model as? any BlockForwardModel {
            positionRegime = { blockModel.positionRegime(sequenceLength: $0) }
        } else {
            positionRegime = { _ in 0 }
        }
        sequence = try model.makeSequenceState(
            capacity: context, block: max(1, min(block, context)), threads: pool.size,
            cacheWidth: cacheWidth)
        regime = positionRegime(0)
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
    /// cache holds (in the same position regime), computes the rest, and returns how many
    /// tokens were reused. The logits of the sequence's last token follow in `logits`. A
    /// sequence that does not fit is refused before anything changes.
    @discardableResult
    public func prepare(_ sequence: [Int]) throws -> Int {
        guard !sequence.isEmpty else { throw SessionError.emptyPrompt }
        try checkFits(sequence, after: 0)
        var reuse = commonPrefixLength(with: sequence)
        if positionRegime(sequence.count) != regime { reuse = 0 }
        reuse = min(reuse, sequence.count - 1)  // the last token's logits are wanted
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
        if keep == 0 { regime = positionRegime(0) }
    }

    /// Empties the cache (the buffers stay allocated).
    public func reset() { rewind(to: 0) }

    /// The logits of the last token processed.
    public var logits: UnsafeBufferPointer<Float> { sequence.logits }

    func checkFits(_ new: some Collection<Int>, after start: Int) throws {
        guard start + new.count <= maxContext else {
            throw SessionError.contextFull(needed: start + new.count, limit: maxContext)
        }
        let vocab = model.vocabularySize
        if let bad = new.first(where: { $0 < 0 || $0 >= vocab }) {
            throw SessionError.tokenOutOfRange(token: bad, vocabularySize: vocab)
        }
    }

    /// For `DecodeBatch`: appends `token` (already checked) and returns the regime to compute
    /// it in, or nil without appending when the token crosses a regime switch (the caller
    /// then steps this session alone, which recomputes the sequence).
    func appendForBatch(_ token: Int) -> Int? {
        guard positionRegime(tokens.count + 1) == regime else { return nil }
        tokens.append(token)
        return regime
    }

    private func feed(_ new: some Collection<Int>) throws -> UnsafeBufferPointer<Float> {
        try checkFits(new, after: position)
        var start = position
        tokens.append(contentsOf: new)
        let needed = positionRegime(tokens.count)
        if needed != regime {
            regime = needed
            start = 0  // the cached keys were embedded in another regime: recompute
        }
        let block = sequence.block
        try pool.exclusively {
            try tokens.withUnsafeBufferPointer { all in
                while start < all.count {
                    let count = min(block, all.count - start)
                    let blockTokens = UnsafeBufferPointer(rebasing: all[start..<start + count])
                    sequence.forward(
                        blockTokens, at: start, regime: regime,
                        logits: start + count == all.count, pool: pool)
                    start += count
                }
            }
        }
        return logits
    }
}

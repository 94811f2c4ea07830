import CKernels

/// One sequence a model works on — a conversation, a server request — that lives across
/// calls: it owns the KV cache and the activation buffers (allocated once) and computes on a
/// shared `WorkerPool`. Feed tokens with `prefill` (a prompt, in blocks of tokens:
/// matrix-matrix work) and `step` (one token: matrix-vector work); both return the logits of
/// the last token, valid until the next call. `verify` feeds a few tokens as one block and
/// returns the logits after each of them (speculative decoding checks a draft with it).
/// `prepare` makes the session hold a new token sequence, computing only what its cache
/// lacks; `rewind` forgets the latest positions. Nothing is allocated per token.
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
    /// The context a session gets when nobody says (`--max-kv-size`, `--ctx-size`): the
    /// model's positions, at most this many (the one place run, chat and serve take it from).
    public static let defaultContextLimit = 4096

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
    /// How wide the activations are in the matrix products (every feed of this session).
    public let activationWidth: ActivationWidth
    /// The run-time adapter (an index into the adapters the model was loaded with) every
    /// feed of this session is corrected by; nil: the base model. Changing it empties the
    /// cache: its keys and values were computed with the other weights.
    public var adapter: Int? {
        didSet {
            precondition(
                adapter.map { (0..<model.adapterCount).contains($0) } ?? true,
                "adapter \(adapter!) of a model with \(model.adapterCount)")
            if adapter != oldValue { reset() }
        }
    }

    let sequence: any SequenceState
    let pool: WorkerPool
    /// The position regime (`BlockForwardModel.positionRegime`) the cached keys are in.
    private(set) var regime = 0
    /// The cache no longer matches `tokens` (a rewind the state refused): the next feed
    /// computes the whole sequence.
    private var stale = false
    /// The model's `positionRegime` (not part of the public model protocol: a LongRoPE detail).
    private let positionRegime: (Int) -> Int

    /// `maxContext` defaults to the model's positions, at most 4096 (the KV cache costs
    /// resident memory only as it fills, but its address space is reserved up front). The
    /// session computes on the process's shared pool.
    public convenience init(
        model: any CausalLanguageModel, maxContext: Int? = nil,
        cacheWidth: KVCacheWidth = .float32, activationWidth: ActivationWidth = .int16
    ) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool.shared(threads: model.threads),
            block: 512, cacheWidth: cacheWidth, activationWidth: activationWidth)
    }

    /// A session on a pool of its own (tests pin threads and kernel levels); `block` is the
    /// prompt block size.
    convenience init(
        model: any CausalLanguageModel, maxContext: Int?, threads: Int, isa: Int32, block: Int,
        cacheWidth: KVCacheWidth = .float32, activationWidth: ActivationWidth = .int16
    ) throws {
        try self.init(
            model: model, maxContext: maxContext, pool: WorkerPool(threads: threads, isa: isa),
            block: block, cacheWidth: cacheWidth, activationWidth: activationWidth)
    }

    init(
        model: any CausalLanguageModel, maxContext: Int?, pool: WorkerPool, block: Int,
        cacheWidth: KVCacheWidth = .float32, activationWidth: ActivationWidth = .int16
    ) throws {
        let context = maxContext ?? min(model.maxPositions, Self.defaultContextLimit)
        guard context >= 1, context <= model.maxPositions else {
            throw SessionError.invalidContext(requested: context, maximum: model.maxPositions)
        }
        self.model = model
        self.maxContext = context
        self.pool = pool
        self.cacheWidth = cacheWidth
        self.activationWidth = activationWidth
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

    /// The most tokens one `verify` call takes (the prompt block size).
    public var maxVerifyTokens: Int { sequence.logitRows }

    /// Processes `tokens` (1…`maxVerifyTokens`) after what is cached, as one block, and returns
    /// the logits after each of them: row i is, bit for bit, what `step(tokens[i])` would have
    /// returned at that point (speculative decoding checks a whole draft with one call, and
    /// scoring text reads every row). A block that crosses a position-regime switch
    /// (LongRoPE) is computed as steps compute it: the rows before the switch in the old
    /// regime, the rest after the whole sequence is computed again in the new one.
    ///
    /// `lastRows` (1…count) computes only the rows of the last tokens (row 0 is then the one
    /// after `tokens[count - lastRows]`): tokens fed before a draft (a constraint's forced
    /// run) need no logits, and each row costs a product with the whole output head.
    public func verify(_ tokens: [Int], lastRows: Int? = nil) throws -> LogitRows {
        let n = tokens.count
        guard n >= 1, n <= maxVerifyTokens else {
            throw SessionError.invalidBlock(tokens: n, maximum: maxVerifyTokens)
        }
        let wanted = min(max(lastRows ?? n, 1), n)
        let first = n - wanted
        try checkFits(tokens, after: position)
        let vocab = model.vocabularySize
        let start = position
        var lo = 0
        while lo < n {
            // the run of rows whose sequence lengths share one regime
            let runRegime = positionRegime(start + lo + 1)
            var hi = lo + 1
            while hi < n && positionRegime(start + hi + 1) == runRegime {
                hi += 1
            }
            let from = max(lo, first)
            _ = try feed(tokens[lo..<hi], logitRows: max(0, hi - from))
            let computed = sequence.logits.baseAddress!
            if lo == 0 && hi == n {
                return LogitRows(base: computed, count: wanted, vocabularySize: vocab)
            }
            if hi > from {
                let rows = try crossingRows()
                (rows.pointer + (from - first) * vocab).update(from: computed, count: (hi - from) * vocab)
            }
            lo = hi
        }
        return LogitRows(base: try crossingRows().pointer, count: wanted, vocabularySize: vocab)
    }

    /// Where `verify` gathers the rows of a block that crosses a regime switch (allocated the
    /// first time one does).
    private var crossing: FloatBuffer?
    private func crossingRows() throws -> FloatBuffer {
        if let crossing { return crossing }
        let rows = try FloatBuffer(count: maxVerifyTokens * model.vocabularySize)
        crossing = rows
        return rows
    }

    /// Makes the session hold exactly `sequence`: keeps the longest prefix of it that the
    /// cache holds (in the same position regime), computes the rest, and returns how many
    /// tokens were reused. The logits of the sequence's last token follow in `logits`. A
    /// sequence that does not fit is refused before anything changes.
    @discardableResult
    public func prepare(_ sequence: [Int]) throws -> Int {
        let valid = try keepPrefix(of: sequence)
        _ = try feed(sequence[position...])
        return valid
    }

    /// `prepare` without the computing: keeps the longest prefix of `sequence` that the cache
    /// holds (in the position regime `sequence` needs, and short of its last token, whose
    /// logits are wanted) and returns how many tokens were reused; the caller feeds
    /// `sequence[position...]` (a server batches it with other sessions' tokens, `DecodeBatch`).
    @discardableResult
    public func keepPrefix(of sequence: [Int]) throws -> Int {
        guard !sequence.isEmpty else { throw SessionError.emptyPrompt }
        try checkFits(sequence, after: 0)
        var reuse = commonPrefixLength(with: sequence)
        if positionRegime(sequence.count) != regime { reuse = 0 }
        reuse = min(reuse, sequence.count - 1)  // the last token's logits are wanted
        return rewind(to: reuse)
    }

    /// How many leading tokens `sequence` shares with the cache.
    public func commonPrefixLength(with sequence: [Int]) -> Int {
        var n = 0
        let limit = min(sequence.count, tokens.count)
        while n < limit && sequence[n] == tokens[n] { n += 1 }
        return n
    }

    /// Forgets every position from `position` on (the buffers stay allocated) and returns how
    /// many of the tokens kept the cache still holds: all of them, or 0 when the sequence
    /// state cannot drop positions (`SequenceState.rewind`) — the kept tokens are then
    /// computed again with the next tokens fed, and the result is the same. Afterwards
    /// `logits` are not those of the last token kept (the caller has them from before).
    @discardableResult
    public func rewind(to position: Int) -> Int {
        let keep = max(0, min(position, tokens.count))
        if keep < tokens.count && !sequence.rewind(to: keep) { stale = true }
        tokens.removeSubrange(keep...)
        if keep == 0 {
            regime = positionRegime(0)
            stale = false
        }
        return stale ? 0 : keep
    }

    /// The cache's rows for the first `count` tokens (default: all of them), to `restore`
    /// later in a session of the same model and width; nil when the cache does not hold
    /// them (a stale cache, or a model state that cannot hand rows out). The rows of a prefix
    /// are the same whatever followed it, but its regime must be the one a cold prefill of
    /// just the prefix uses.
    public func snapshot(count: Int? = nil) -> KVSnapshot? {
        let n = count ?? tokens.count
        guard !stale, n >= 1, n <= tokens.count, positionRegime(n) == regime,
            let rows = sequence.cacheRows(positions: n)
        else { return nil }
        let config = model.config
        return KVSnapshot(
            layout: KVSnapshot.Layout(
                tokens: Array(tokens[..<n]), regime: regime, cacheWidth: cacheWidth,
                layers: config.layerCount, kvHeads: config.kvHeads, headDim: config.headDim),
            rows: rows)
    }

    /// Replaces what the session holds by `snapshot`'s prefix: afterwards `tokens` is the
    /// prefix and the next `prefill`, `step` or `prepare` computes bit for bit what it would
    /// after a cold prefill of it. `logits` are not those of the prefix's last token (`prepare`
    /// of a sequence that extends the prefix computes at least its last token). Throws, with
    /// the session unchanged, when the snapshot is of another cache shape or width, another
    /// position regime, or does not fit the context.
    public func restore(_ snapshot: KVSnapshot) throws {
        let layout = snapshot.layout
        guard snapshot.rows.count == layout.rowBytes else {
            throw SessionError.snapshotMismatch(
                reason: "it has \(snapshot.rows.count) bytes of rows, "
                    + "\(layout.tokens.count) positions take \(layout.rowBytes)")
        }
        try snapshot.rows.withUnsafeBytes { rows in
            try restore(layout) { piece, offset in
                piece.copyMemory(from: UnsafeRawBufferPointer(rebasing: rows[offset..<offset + piece.count]))
            }
        }
    }

    /// `restore` with the rows written by `fill` straight into the cache: it is called for
    /// each piece of the cache the rows go into, in order, with the piece's offset in the flat
    /// `KVSnapshot.rows` layout, and must fill all of it (a disk cache reads a file's bytes
    /// into it, so a long prefix is not copied twice). Throws, with the session unchanged, for
    /// what `restore` refuses. When `fill` throws, the session is left empty and its error is
    /// passed on.
    public func restore(
        _ layout: KVSnapshot.Layout, rows fill: (UnsafeMutableRawBufferPointer, Int) throws -> Void
    ) throws {
        let n = layout.tokens.count
        let config = model.config
        func mismatch(_ reason: String) -> SessionError { .snapshotMismatch(reason: reason) }
        guard n >= 1 else { throw mismatch("it holds no tokens") }
        guard layout.cacheWidth == cacheWidth else {
            throw mismatch(
                "its keys and values are \(layout.cacheWidth.rawValue)-bit, the session's "
                    + "\(cacheWidth.rawValue)-bit")
        }
        guard
            (layout.layers, layout.kvHeads, layout.headDim)
                == (config.layerCount, config.kvHeads, config.headDim)
        else {
            throw mismatch(
                "its cache is \(layout.layers)×\(layout.kvHeads)×\(layout.headDim) "
                    + "(layers × kv heads × head dim), the model's "
                    + "\(config.layerCount)×\(config.kvHeads)×\(config.headDim)")
        }
        try checkFits(layout.tokens, after: 0)
        guard positionRegime(n) == layout.regime else {
            throw mismatch("its positions are embedded in another regime (LongRoPE factors)")
        }
        reset()
        // a fill that fails leaves some positions written: nothing reads them, since the
        // session holds no tokens, and the next forward pass overwrites them
        guard try sequence.loadCacheRows(positions: n, fill) else {
            throw mismatch("this model's state cannot take cached rows")
        }
        tokens.append(contentsOf: layout.tokens)
        regime = layout.regime
    }

    /// Empties the cache (the buffers stay allocated).
    public func reset() { rewind(to: 0) }

    /// The logits of the last token processed.
    public var logits: UnsafeBufferPointer<Float> {
        let all = sequence.logits
        let vocab = model.vocabularySize
        return UnsafeBufferPointer(rebasing: all[(all.count - vocab)...])
    }

    func checkFits(_ new: some Collection<Int>, after start: Int) throws {
        guard start + new.count <= maxContext else {
            throw SessionError.contextFull(needed: start + new.count, limit: maxContext)
        }
        let vocab = model.vocabularySize
        if let bad = new.first(where: { $0 < 0 || $0 >= vocab }) {
            throw SessionError.tokenOutOfRange(token: bad, vocabularySize: vocab)
        }
    }

    /// For `DecodeBatch`: appends `block` (already checked) and returns the regime to compute
    /// it in, or nil without appending when the block crosses a regime switch (the regime
    /// only changes once, as the sequence grows) or the cache is stale (the caller then
    /// verifies this session alone, which recomputes what it must).
    func appendForBatch(_ block: [Int]) -> Int? {
        guard !stale, positionRegime(tokens.count + block.count) == regime else { return nil }
        tokens.append(contentsOf: block)
        return regime
    }

    /// Computes `new` after the cache, in blocks, the logits of its last `logitRows` tokens
    /// (at most `block`) in the last block.
    private func feed(
        _ new: some Collection<Int>, logitRows rows: Int = 1
    ) throws -> UnsafeBufferPointer<Float> {
        try checkFits(new, after: position)
        var start = position
        tokens.append(contentsOf: new)
        let needed = positionRegime(tokens.count)
        if needed != regime || stale {
            // the cached keys were embedded in another regime, or not kept: recompute
            regime = needed
            stale = false
            start = 0
        }
        let block = sequence.block
        pool.exclusively(activations: activationWidth, adapters: .uniform(adapter)) {
            tokens.withUnsafeBufferPointer { all in
                let end = all.count
                while start < end {
                    var stop = min(start + block, end)
                    // the rows whose logits are wanted all go in the last block
                    if stop < end && end - stop < rows { stop = end - rows }
                    sequence.forward(
                        UnsafeBufferPointer(rebasing: all[start..<stop]), at: start,
                        regime: regime, logitRows: stop == end ? rows : 0, pool: pool)
                    start = stop
                }
            }
        }
        return logits
    }
}

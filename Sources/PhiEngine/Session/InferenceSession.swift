import CKernels

/// One conversation with a model: the KV cache, the activation buffers and the worker
/// threads, all allocated here once. Feed tokens with `prefill` (a prompt, in blocks of
/// tokens: matrix-matrix work) and `step` (one token: matrix-vector work); both return the
/// logits of the last token, valid until the next call. Nothing is allocated per token.
///
/// LongRoPE models switch from the short to the long factors once the sequence is longer than
/// `original_max_position_embeddings`. As in transformers (`Phi3ForCausalLM.
/// prepare_inputs_for_generation`), the cached keys of the shorter sequence are then thrown
/// away and the whole sequence is processed again with the long factors.
public final class InferenceSession {
    public let model: Phi3Model
    /// Positions the KV cache holds.
    public let maxContext: Int
    /// Every token fed so far, in order (capacity reserved for `maxContext`).
    public private(set) var tokens: [Int] = []
    /// Tokens in the cache; the next token goes to this position.
    public var position: Int { tokens.count }
    /// Threads the session computes with.
    public var threads: Int { pool.size }

    let cache: KVCache
    let state: RunState
    let pool: WorkerPool
    /// Whether the cache holds keys rotated with LongRoPE's long factors.
    private(set) var usesLongFactors = false

    /// `maxContext` defaults to the model's positions, at most 4096 (the KV cache costs
    /// resident memory only as it fills, but its address space is reserved up front).
    public convenience init(model: Phi3Model, maxContext: Int? = nil) throws {
        try self.init(
            model: model, maxContext: maxContext, threads: model.threads,
            isa: pk_matvec_best_isa(), block: 512)
    }

    /// `isa` pins the kernel level (tests compare levels); `block` is the prompt block size.
    init(model: Phi3Model, maxContext: Int?, threads: Int, isa: Int32, block: Int) throws {
        let context = maxContext ?? min(model.maxPositions, 4096)
        guard context >= 1, context <= model.maxPositions else {
            throw SessionError.invalidContext(requested: context, maximum: model.maxPositions)
        }
        self.model = model
        self.maxContext = context
        // Each worker runs its own single-threaded sgemm on its own rows (float32 prompts).
        Blas.setThreads(1)
        pool = try WorkerPool(threads: threads, isa: isa)
        cache = try KVCache(shape: model.shape, capacity: context)
        state = try RunState(
            shape: model.shape, block: max(1, min(block, context)), capacity: context,
            threads: pool.size)
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

    /// Empties the cache (the buffers stay allocated).
    public func reset() {
        tokens.removeAll(keepingCapacity: true)
        usesLongFactors = false
    }

    /// The logits of the last token processed.
    public var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: model.shape.vocab)
    }

    private func feed(_ new: some Collection<Int>) throws -> UnsafeBufferPointer<Float> {
        guard position + new.count <= maxContext else {
            throw SessionError.contextFull(needed: position + new.count, limit: maxContext)
        }
        let vocab = model.shape.vocab
        if let bad = new.first(where: { $0 < 0 || $0 >= vocab }) {
            throw SessionError.tokenOutOfRange(token: bad, vocabularySize: vocab)
        }
        var start = position
        tokens.append(contentsOf: new)
        if !usesLongFactors && model.rope.usesLongFactors(sequenceLength: tokens.count) {
            usesLongFactors = true
            start = 0  // the cached keys were rotated with the short factors: recompute
        }
        while start < tokens.count {
            let count = min(state.block, tokens.count - start)
            forward(at: start, count: count, logits: start + count == tokens.count)
            start += count
        }
        return logits
    }
}

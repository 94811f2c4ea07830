/// What the per-sequence and batched state of every architecture have in common: a model
/// whose forward pass runs a block of tokens that may belong to several sequences (a prompt
/// block of one, or one decode step of each in a `DecodeBatch`), every weight read once for
/// the block while each span of tokens keeps its keys and values in its own sequence's cache.
/// A model folder (Models/Phi3/, Models/PhiMoE/) gives its buffers and forward pass; the
/// sequence, span and batch types here are the same for all of them (its
/// `makeSequenceState` / `makeBatchState` return a `ModelSequence` / `ModelBatch`).
protocol BlockForwardModel: CausalLanguageModel {
    associatedtype Buffers: BlockBuffers

    /// (layers, kvHeads, headDim) of the KV cache.
    var cacheShape: (layers: Int, kvHeads: Int, headDim: Int) { get }

    /// Activation buffers for blocks of up to `block` tokens over `capacity` cached
    /// positions, with the logits of the last `logitRows` tokens.
    func makeBuffers(
        block: Int, capacity: Int, threads: Int, logitRows: Int
    ) throws(SessionError) -> Buffers

    /// Runs `tokens` (the spans cover them, in order), writing keys and values into each
    /// span's cache, then the logits of the last `logitRows` tokens into `buffers.logits`
    /// (logitRows × vocab).
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<Self>>,
        buffers: Buffers, logitRows: Int, pool: WorkerPool)
}

/// The buffers a model's forward pass writes into: the ones every architecture has
/// (`BlockActivations`), read as its own members (`buffers.x`, `buffers.logits`), and its own.
@dynamicMemberLookup
protocol BlockBuffers: AnyObject {
    var shared: BlockActivations { get }
}

extension BlockBuffers {
    subscript<T>(dynamicMember path: KeyPath<BlockActivations, T>) -> T {
        shared[keyPath: path]
    }
}

/// Consecutive tokens of a block that belong to one sequence, at positions `p0`, `p0 + 1`, …
struct SequenceSpan<Model: BlockForwardModel> {
    let sequence: ModelSequence<Model>
    /// Index of the span's first token in the block.
    let first: Int
    let count: Int
    let p0: Int
    /// The sequence's position regime (1: LongRoPE's long factors).
    let regime: Int
}

/// One sequence of a model: its KV cache and activation buffers, allocated once.
final class ModelSequence<Model: BlockForwardModel>: SequenceState {
    let model: Model
    let cache: KVCache
    let state: Model.Buffers
    var block: Int { state.block }
    var capacity: Int { cache.capacity }
    /// Every token of a block can have its logits (speculative verification, scoring text);
    /// the rows are an anonymous mapping, so they cost memory only once written.
    var logitRows: Int { state.block }
    /// Rows the latest `forward` (or batch step) wrote.
    var rowsWritten = 1

    init(
        model: Model, capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws(SessionError) {
        let c = model.cacheShape
        self.model = model
        cache = try KVCache(
            layers: c.layers, kvHeads: c.kvHeads, headDim: c.headDim, capacity: capacity,
            width: cacheWidth)
        state = try model.makeBuffers(
            block: block, capacity: capacity, threads: threads, logitRows: block)
    }

    var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: rowsWritten * model.vocabularySize)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logitRows: Int,
        pool: WorkerPool
    ) {
        let span = SequenceSpan(sequence: self, first: 0, count: tokens.count, p0: p0, regime: regime)
        model.forward(
            tokens, spans: CollectionOfOne(span), buffers: state, logitRows: logitRows, pool: pool)
        if logitRows > 0 { rowsWritten = logitRows }
    }

    /// Always possible: a position's cache rows are written when it is computed and read only
    /// by later positions, so the next `forward` overwrites them (8-bit keys calibrate again
    /// when the last of the first PK_KV_CALIBRATION positions is stored again).
    func rewind(to position: Int) -> Bool { true }
}

/// Decode steps of up to `maxSequences` sequences of one model as one forward pass: each
/// weight is read once for all of them; each sequence keeps its own cache and scores.
final class ModelBatch<Model: BlockForwardModel>: BatchState {
    let model: Model
    let buffers: Model.Buffers
    let maxSequences: Int
    /// Reused across steps (nothing is allocated per token).
    private var spans: [SequenceSpan<Model>] = []

    init(model: Model, maxSequences: Int, threads: Int) throws(SessionError) {
        self.model = model
        self.maxSequences = maxSequences
        buffers = try model.makeBuffers(
            block: maxSequences, capacity: 1, threads: threads, logitRows: maxSequences)
        spans.reserveCapacity(maxSequences)
    }

    func step(
        _ sequences: [any SequenceState], tokens: UnsafeBufferPointer<Int>, positions: [Int],
        regimes: [Int], pool: WorkerPool
    ) {
        spans.removeAll(keepingCapacity: true)
        for (i, sequence) in sequences.enumerated() {
            // swift-format-ignore: the session checked that every sequence is this model's
            let own = sequence as! ModelSequence<Model>
            spans.append(
                SequenceSpan(sequence: own, first: i, count: 1, p0: positions[i], regime: regimes[i]))
        }
        model.forward(
            tokens, spans: spans, buffers: buffers, logitRows: sequences.count, pool: pool)
        let vocab = model.vocabularySize
        for (i, span) in spans.enumerated() {
            span.sequence.state.logits.pointer.update(
                from: buffers.logits.pointer + i * vocab, count: vocab)
            span.sequence.rowsWritten = 1
        }
    }
}

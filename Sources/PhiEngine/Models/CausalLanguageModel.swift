import PhiFormats

/// A decoder-only language model as the session and generation code see it: immutable,
/// memory-mapped weights that any number of sequences share. Everything that depends on the
/// architecture — tensors, the forward pass, how positions are embedded — lives behind this
/// protocol in the model's own folder (`Models/Phi3/`); sessions, generation and sampling
/// never name an architecture. `ModelArchitectures.load` maps config.json's `model_type` to one.
public protocol CausalLanguageModel: AnyObject, Sendable {
    /// The directory the weights were mapped from.
    var directory: String { get }
    var config: ModelConfig { get }
    /// `generation_config.json`, when the directory has one (its `eos_token_id` list is one
    /// of the inputs of `StopTokens`).
    var generationConfig: GenerationConfig? { get }
    /// Rows of the embedding: token ids must be below it.
    var vocabularySize: Int { get }
    /// Positions the model supports (`max_position_embeddings`).
    var maxPositions: Int { get }
    /// Bytes of weights one decode step reads (divide a memory bandwidth by it for the decode
    /// speed limit).
    var bytesPerToken: Int { get }
    /// Weight files held as a resident copy rather than mapped (`WeightPlacement`): what
    /// `.hugePagesOrResident` chose, for statistics. Default 0.
    var residentWeightFiles: Int { get }
    /// Threads a session computes with by default.
    var threads: Int { get }
    /// Run-time LoRA/DoRA adapters loaded with the model; a session selects one of them by
    /// index (`InferenceSession.adapter`) or none.
    var adapterCount: Int { get }

    /// The per-sequence state: a KV cache of `cacheWidth` for `capacity` positions and the
    /// activation buffers for blocks of up to `block` tokens on a pool of `threads` threads.
    func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState

    /// Buffers for batched steps of up to `maxSequences` sequences and `maxTokens` tokens in
    /// all at once (`DecodeBatch`: a decode step, or a pending token and its draft, of each).
    func makeBatchState(maxSequences: Int, maxTokens: Int, threads: Int) throws -> any BatchState

}

/// One sequence's mutable state for a model: its KV cache and scratch buffers, allocated once.
/// Only an `InferenceSession` drives it.
public protocol SequenceState: AnyObject {
    /// The most tokens one `forward` call takes.
    var block: Int { get }
    /// Positions the KV cache holds.
    var capacity: Int { get }
    /// The most logit rows one `forward` writes (at least 1, at most `block`).
    var logitRows: Int { get }
    /// The logits of the latest `forward` that asked for them: one row (vocab) per token of
    /// its last tokens, in order, so the last row follows the last token.
    var logits: UnsafeBufferPointer<Float> { get }

    /// Runs `tokens` (at most `block`) at positions `p0…`, storing their keys and values, with
    /// the positions embedded in `regime`; writes the logits of the last `logitRows` tokens
    /// (0: none).
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logitRows: Int,
        pool: WorkerPool)

    /// Forgets the cached positions from `position` on, so the next `forward` may start there.
    /// A state that cannot (a cache that cannot drop its latest positions) answers false; the
    /// session then computes the kept positions again.
    func rewind(to position: Int) -> Bool

    /// The cached rows of positions [0, n) as stored (`KVSnapshot.rows`); nil for a state that
    /// cannot hand them out.
    func cacheRows(positions n: Int) -> [UInt8]?

    /// Stores rows (as `cacheRows` of a state of the same model and width hands them out) as
    /// positions [0, n): `fill` writes each piece of the cache, given in order with its
    /// offset in the flat rows. False when this state cannot, or n does not fit.
    func loadCacheRows(
        positions n: Int, _ fill: (UnsafeMutableRawBufferPointer, Int) throws -> Void
    ) rethrows -> Bool
}

extension SequenceState {
    public func cacheRows(positions n: Int) -> [UInt8]? { nil }
    public func loadCacheRows(
        positions n: Int, _ fill: (UnsafeMutableRawBufferPointer, Int) throws -> Void
    ) rethrows -> Bool { false }
}

/// Steps of several sequences of one model as one forward pass, a few tokens of each (a
/// decode step, or a token and the draft to verify after it): each weight is read once for
/// all of them. Only a `DecodeBatch` drives it.
public protocol BatchState: AnyObject {
    var maxSequences: Int { get }
    /// The most tokens one `step` takes, all sequences together.
    var maxTokens: Int { get }

    /// Sequence i takes the next `counts[i]` of `tokens` (the sequences' tokens one after the
    /// other) at positions `positions[i]…` in `regimes[i]`; afterwards its `logits` hold one
    /// row after each of its tokens, bit for bit what a block of its own gives.
    func step(
        _ sequences: [any SequenceState], tokens: UnsafeBufferPointer<Int>, counts: [Int],
        positions: [Int], regimes: [Int], pool: WorkerPool)
}

extension CausalLanguageModel {
    public var residentWeightFiles: Int { 0 }
}

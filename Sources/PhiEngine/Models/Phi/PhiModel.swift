import CKernels
import Foundation
import PhiFormats

/// A phi model (Phi-1, Phi-1.5, Phi-2: `model_type` "phi") loaded from a directory, weights
/// memory-mapped in place. Immutable and shareable; text is produced by an `InferenceSession`
/// (which owns a `PhiSequence`: the KV cache and the activations).
public final class PhiModel: CausalLanguageModel {
    public let directory: String
    public let config: ModelConfig
    public let generationConfig: GenerationConfig?
    /// Threads a session uses by default: `threads` given to `load`, else every core.
    public let threads: Int
    let shape: PhiShape
    /// Plain RoPE over `ropeDim` dims (phi has no scaling variants: PhiSchema refuses them).
    let rope: RotaryEmbedding
    let weights: PhiWeights

    init(
        directory: String, config: ModelConfig, generationConfig: GenerationConfig?,
        weights: PhiWeights, threads: Int
    ) {
        self.directory = directory
        self.config = config
        self.generationConfig = generationConfig
        self.weights = weights
        self.threads = threads
        shape = PhiShape(config)
        rope = RotaryEmbedding(config)
    }

    /// Reads config.json (validated), maps the safetensors files and checks every tensor
    /// against the config; weights are read by the first forward pass.
    public static func load(directory: String, threads: Int? = nil) throws -> PhiModel {
        let config = try ModelConfig.load(directory: directory)
        guard config.modelType == "phi" else {
            throw ConfigError.unsupportedArchitecture(
                path: config.source, modelType: config.modelType)
        }
        let generationConfig = try GenerationConfig.load(directory: directory)
        let weights = try PhiWeights(ModelWeights(directory: directory), config: config)
        weights.prefetch()
        return PhiModel(
            directory: directory, config: config, generationConfig: generationConfig,
            weights: weights, threads: max(1, threads ?? Int(pk_available_cores())))
    }

    public var vocabularySize: Int { shape.vocab }
    public var maxPositions: Int { shape.maxPositions }
    public var bytesPerToken: Int { weights.bytesPerToken }

    public func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState {
        try PhiSequence(
            model: self, capacity: capacity, block: block, threads: threads,
            cacheWidth: cacheWidth)
    }

    public func makeBatchState(maxSequences: Int, threads: Int) throws -> any BatchState {
        try PhiBatch(model: self, maxSequences: maxSequences, threads: threads)
    }

    /// One regime: positions embed the same way at every sequence length.
    public func positionRegime(sequenceLength length: Int) -> Int { 0 }
}

/// One sequence of a `PhiModel`: its KV cache and activation buffers, allocated once.
final class PhiSequence: SequenceState {
    let model: PhiModel
    let cache: KVCache
    let state: PhiBuffers
    var block: Int { state.block }
    var capacity: Int { cache.capacity }

    init(
        model: PhiModel, capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws(SessionError) {
        let s = model.shape
        self.model = model
        cache = try KVCache(
            layers: s.layers, kvHeads: s.kvHeads, headDim: s.headDim, capacity: capacity,
            width: cacheWidth)
        state = try PhiBuffers(shape: s, block: block, capacity: capacity, threads: threads)
    }

    var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: model.shape.vocab)
    }
}

/// Activation buffers for decode steps of up to `maxSequences` phi sequences at once; each
/// sequence keeps its own KV cache and attention scores.
final class PhiBatch: BatchState {
    let model: PhiModel
    let buffers: PhiBuffers
    let maxSequences: Int
    /// Reused across steps (nothing is allocated per token).
    private var spans: [PhiSpan] = []

    init(model: PhiModel, maxSequences: Int, threads: Int) throws(SessionError) {
        self.model = model
        self.maxSequences = maxSequences
        buffers = try PhiBuffers(
            shape: model.shape, block: maxSequences, capacity: 1, threads: threads,
            logitRows: maxSequences)
        spans.reserveCapacity(maxSequences)
    }

    func step(
        _ sequences: [any SequenceState], tokens: UnsafeBufferPointer<Int>, positions: [Int],
        regimes: [Int], pool: WorkerPool
    ) {
        spans.removeAll(keepingCapacity: true)
        for (i, sequence) in sequences.enumerated() {
            // swift-format-ignore: the session checked that every sequence is this model's
            let own = sequence as! PhiSequence
            spans.append(PhiSpan(sequence: own, first: i, count: 1, p0: positions[i]))
        }
        model.forward(
            tokens, spans: spans, buffers: buffers, logitRows: sequences.count, pool: pool)
        let vocab = model.shape.vocab
        for (i, span) in spans.enumerated() {
            span.sequence.state.logits.pointer.update(
                from: buffers.logits.pointer + i * vocab, count: vocab)
        }
    }
}

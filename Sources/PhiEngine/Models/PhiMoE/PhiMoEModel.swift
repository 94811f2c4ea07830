import CKernels
import Foundation
import PhiFormats

/// A Phi-3.5-MoE model (`model_type` "phimoe") loaded from a directory, weights memory-mapped
/// in place, the experts read only when a token is routed to them. Immutable and shareable,
/// like `Phi3Model`; sessions own a `PhiMoESequence` (KV cache and activations).
public final class PhiMoEModel: CausalLanguageModel {
    public let directory: String
    public let config: ModelConfig
    public let generationConfig: GenerationConfig?
    public let threads: Int
    let shape: PhiMoEShape
    let rope: RotaryEmbedding
    let router: PhiMoERouter
    let weights: PhiMoEWeights

    init(
        directory: String, config: ModelConfig, generationConfig: GenerationConfig?,
        weights: PhiMoEWeights, threads: Int
    ) {
        self.directory = directory
        self.config = config
        self.generationConfig = generationConfig
        self.weights = weights
        self.threads = threads
        shape = PhiMoEShape(config)
        rope = RotaryEmbedding(config, usesMscales: true)
        router = PhiMoERouter(shape)
    }

    /// Reads and validates config.json, maps the safetensors files and checks every tensor
    /// against the phimoe schema (stacked mlx experts or Hugging Face per-expert tensors).
    public static func load(directory: String, threads: Int? = nil) throws -> PhiMoEModel {
        let config = try ModelConfig.load(directory: directory)
        guard config.modelType == "phimoe" else {
            throw ConfigError.unsupportedArchitecture(
                path: config.source, modelType: config.modelType)
        }
        let generationConfig = try GenerationConfig.load(directory: directory)
        let files = try ModelWeights(directory: directory)
        let weights = try PhiMoEWeights(files, config: config)
        weights.prefetch()
        return PhiMoEModel(
            directory: directory, config: config, generationConfig: generationConfig,
            weights: weights, threads: max(1, threads ?? Int(pk_available_cores())))
    }

    public var vocabularySize: Int { shape.vocab }
    public var maxPositions: Int { shape.maxPositions }
    public var bytesPerToken: Int { weights.bytesPerToken(expertsPerToken: shape.expertsPerToken) }

    public func makeSequenceState(
        capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws -> any SequenceState {
        try PhiMoESequence(
            model: self, capacity: capacity, block: block, threads: threads,
            cacheWidth: cacheWidth)
    }

    public func makeBatchState(maxSequences: Int, threads: Int) throws -> any BatchState {
        try PhiMoEBatch(model: self, maxSequences: maxSequences, threads: threads)
    }

    /// 1 once LongRoPE uses its long factors (and long mscale), else 0.
    public func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}

/// One sequence of a `PhiMoEModel`: its KV cache and activation buffers, allocated once.
final class PhiMoESequence: SequenceState {
    let model: PhiMoEModel
    let cache: KVCache
    let state: PhiMoEBuffers
    var block: Int { state.block }
    var capacity: Int { cache.capacity }

    init(
        model: PhiMoEModel, capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws(SessionError) {
        let s = model.shape
        self.model = model
        cache = try KVCache(
            layers: s.layers, kvHeads: s.kvHeads, headDim: s.headDim, capacity: capacity,
            width: cacheWidth)
        state = try PhiMoEBuffers(shape: s, block: block, capacity: capacity, threads: threads)
    }

    var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: model.shape.vocab)
    }

    func forward(
        _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logits: Bool,
        pool: WorkerPool
    ) {
        let span = PhiMoESpan(sequence: self, first: 0, count: tokens.count, p0: p0, regime: regime)
        model.forward(
            tokens, spans: CollectionOfOne(span), buffers: state, logitRows: logits ? 1 : 0,
            pool: pool)
    }
}

/// Decode steps of up to `maxSequences` phimoe sequences as one forward pass: dense weights
/// are read once for all of them, each expert once for the sequences routed to it.
final class PhiMoEBatch: BatchState {
    let model: PhiMoEModel
    let buffers: PhiMoEBuffers
    let maxSequences: Int
    private var spans: [PhiMoESpan] = []

    init(model: PhiMoEModel, maxSequences: Int, threads: Int) throws(SessionError) {
        self.model = model
        self.maxSequences = maxSequences
        buffers = try PhiMoEBuffers(
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
            let own = sequence as! PhiMoESequence
            spans.append(
                PhiMoESpan(sequence: own, first: i, count: 1, p0: positions[i], regime: regimes[i]))
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

import CKernels
import Foundation
import PhiFormats

/// A Phi-3.5-MoE model (`model_type` "phimoe") loaded from a directory, weights memory-mapped
/// in place, the experts read only when a token is routed to them. Immutable and shareable,
/// like `Phi3Model`; sessions own a `ModelSequence<PhiMoEModel>` (KV cache and activations).
public final class PhiMoEModel: CausalLanguageModel, BlockForwardModel {
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
        try ModelSequence(
            model: self, capacity: capacity, block: block, threads: threads,
            cacheWidth: cacheWidth)
    }

    public func makeBatchState(maxSequences: Int, threads: Int) throws -> any BatchState {
        try ModelBatch(model: self, maxSequences: maxSequences, threads: threads)
    }

    var cacheShape: (layers: Int, kvHeads: Int, headDim: Int) {
        (shape.layers, shape.kvHeads, shape.headDim)
    }

    func makeBuffers(
        block: Int, capacity: Int, threads: Int, logitRows: Int
    ) throws(SessionError) -> PhiMoEBuffers {
        try PhiMoEBuffers(
            shape: shape, block: block, capacity: capacity, threads: threads, logitRows: logitRows)
    }

    /// 1 once LongRoPE uses its long factors (and long mscale), else 0.
    public func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}

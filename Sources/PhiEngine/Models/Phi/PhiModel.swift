import CKernels
import Foundation
import PhiFormats

/// A phi model (Phi-1, Phi-1.5, Phi-2: `model_type` "phi") loaded from a directory, weights
/// memory-mapped in place. Immutable and shareable; text is produced by an `InferenceSession`
/// (which owns a `ModelSequence<PhiModel>`: the KV cache and the activations).
public final class PhiModel: CausalLanguageModel, BlockForwardModel {
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
    ) throws(SessionError) -> PhiBuffers {
        try PhiBuffers(
            shape: shape, block: block, capacity: capacity, threads: threads, logitRows: logitRows)
    }

    /// One regime: positions embed the same way at every sequence length.
    public func positionRegime(sequenceLength length: Int) -> Int { 0 }
}

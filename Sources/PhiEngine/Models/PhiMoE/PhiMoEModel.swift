import CKernels
import Foundation
import PhiFormats

/// A Phi-3.5-MoE model (`model_type` "phimoe") loaded from a directory, weights memory-mapped
/// in place, the experts read only when a token is routed to them. Immutable and shareable,
/// like `Phi3Model`; sessions own a `ModelSequence<PhiMoEModel>` (KV cache and activations).
public final class PhiMoEModel: CausalLanguageModel, BlockForwardModel {
    static let schema: any ArchitectureSchema = PhiMoESchema()

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

    public var bytesPerToken: Int { weights.bytesPerToken(expertsPerToken: shape.expertsPerToken) }

    /// 1 once LongRoPE uses its long factors (and long mscale), else 0.
    func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}

extension PhiMoESchema: RunnableSchema {
    typealias Model = PhiMoEModel
}

import CKernels
import Foundation
import PhiFormats

/// A phi model (Phi-1, Phi-1.5, Phi-2: `model_type` "phi") loaded from a directory, weights
/// memory-mapped in place. Immutable and shareable; text is produced by an `InferenceSession`
/// (which owns a `ModelSequence<PhiModel>`: the KV cache and the activations).
public final class PhiModel: CausalLanguageModel, BlockForwardModel {
    static let schema: any ArchitectureSchema = PhiSchema()

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

    public var bytesPerToken: Int { weights.bytesPerToken }
}

extension PhiSchema: RunnableSchema {
    typealias Model = PhiModel
}

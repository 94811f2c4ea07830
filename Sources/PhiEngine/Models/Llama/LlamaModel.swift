import Foundation
import PhiFormats

/// A llama model (Llama 2/3.x, SmolLM2, TinyLlama: `model_type` "llama") loaded from a
/// directory, weights memory-mapped in place. Immutable and shareable; text is produced by an
/// `InferenceSession` (which owns a `ModelSequence<LlamaModel>`: the KV cache and the
/// activations).
public final class LlamaModel: CausalLanguageModel, BlockForwardModel {
    static let schema: any ArchitectureSchema = LlamaSchema()

    public let directory: String
    public let config: ModelConfig
    public let generationConfig: GenerationConfig?
    /// Threads a session uses by default: `threads` given to `load`, else every core.
    public let threads: Int
    let shape: LlamaShape
    /// RoPE over the whole head: plain, linear or Llama 3's scaling (LlamaSchema refuses
    /// LongRoPE, so there is one position regime).
    let rope: RotaryEmbedding
    let weights: LlamaWeights

    init(
        directory: String, config: ModelConfig, generationConfig: GenerationConfig?,
        weights: LlamaWeights, threads: Int
    ) {
        self.directory = directory
        self.config = config
        self.generationConfig = generationConfig
        self.weights = weights
        self.threads = threads
        shape = LlamaShape(config)
        rope = RotaryEmbedding(config)
    }

    public var bytesPerToken: Int { weights.bytesPerToken }
}

extension LlamaSchema: RunnableSchema {
    typealias Model = LlamaModel
}

import CKernels
import Foundation
import PhiFormats

/// A Phi-3 family model (Phi-3, Phi-3.5-mini, Phi-4-mini: `model_type` "phi3") loaded from a
/// directory, weights memory-mapped in place. Immutable and shareable; text is produced by an
/// `InferenceSession` (which owns a `ModelSequence<Phi3Model>`: the KV cache and the
/// activations).
///
///     let model = try Phi3Model.load(directory: dir)
///     let session = try InferenceSession(model: model)
///     let logits = try session.prefill(promptTokens)
public final class Phi3Model: CausalLanguageModel, BlockForwardModel {
    static let schema: any ArchitectureSchema = Phi3Schema()

    public let directory: String
    public let config: ModelConfig
    /// `generation_config.json`, when the directory has one (its `eos_token_id` list is one
    /// of the inputs of `StopTokens`).
    public let generationConfig: GenerationConfig?
    /// Threads a session uses by default: `threads` given to `load`, else every core.
    public let threads: Int
    let shape: Phi3Shape
    let rope: RotaryEmbedding
    let weights: Phi3Weights

    init(
        directory: String, config: ModelConfig, generationConfig: GenerationConfig?,
        weights: Phi3Weights, threads: Int
    ) {
        self.directory = directory
        self.config = config
        self.generationConfig = generationConfig
        self.weights = weights
        self.threads = threads
        shape = Phi3Shape(config)
        rope = RotaryEmbedding(config)
    }

    public var bytesPerToken: Int { weights.bytesPerToken }

    /// 1 once LongRoPE uses its long factors for a sequence of this length, else 0.
    func positionRegime(sequenceLength length: Int) -> Int {
        rope.usesLongFactors(sequenceLength: length) ? 1 : 0
    }
}

extension Phi3Schema: RunnableSchema {
    typealias Model = Phi3Model
}

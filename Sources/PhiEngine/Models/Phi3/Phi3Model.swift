import PhiFormats

/// A Phi-3 family model (Phi-3, Phi-3.5-mini, Phi-4-mini: `model_type` "phi3") loaded from a
/// directory, weights memory-mapped in place. Immutable and shareable; text is produced by an
/// `InferenceSession` (which owns a `ModelSequence<Phi3Model>`: the KV cache and the
/// activations). LongRoPE switches to its long factors past
/// `original_max_position_embeddings` (`positionRegime`).
///
///     let model = try Phi3Model.load(directory: dir)
///     let session = try InferenceSession(model: model)
///     let logits = try session.prefill(promptTokens)
public final class Phi3Model: CausalLanguageModel, BlockForwardModel {
    let loaded: LoadedModel<RMSNormShape, Phi3Weights>

    init(_ loaded: LoadedModel<RMSNormShape, Phi3Weights>) { self.loaded = loaded }

    /// Rows of the fused qkv_proj: queries, then keys, then values.
    static func qkvRows(_ s: RMSNormShape) -> Int { (s.heads + 2 * s.kvHeads) * s.headDim }
}

extension Phi3Schema: RunnableSchema {
    typealias Model = Phi3Model
}

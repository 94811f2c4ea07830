import PhiFormats

/// A llama model (Llama 2/3.x, SmolLM2, TinyLlama: `model_type` "llama") loaded from a
/// directory, weights memory-mapped in place. Immutable and shareable; text is produced by an
/// `InferenceSession` (which owns a `ModelSequence<LlamaModel>`: the KV cache and the
/// activations). RoPE covers the whole head: plain, linear or Llama 3's scaling (LlamaSchema
/// refuses LongRoPE, so there is one position regime).
public final class LlamaModel: CausalLanguageModel, BlockForwardModel {
    let loaded: LoadedModel<RMSNormShape, LlamaWeights>

    init(_ loaded: LoadedModel<RMSNormShape, LlamaWeights>) { self.loaded = loaded }
}

extension LlamaSchema: RunnableSchema {
    typealias Model = LlamaModel
}

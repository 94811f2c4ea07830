import PhiFormats

/// A phi model (Phi-1, Phi-1.5, Phi-2: `model_type` "phi") loaded from a directory, weights
/// memory-mapped in place. Immutable and shareable; text is produced by an `InferenceSession`
/// (which owns a `ModelSequence<PhiModel>`: the KV cache and the activations). Plain RoPE
/// over `ropeDim` dims (phi has no scaling variants: PhiSchema refuses them).
public final class PhiModel: CausalLanguageModel, BlockForwardModel {
    let loaded: LoadedModel<PhiShape, PhiWeights>

    init(_ loaded: LoadedModel<PhiShape, PhiWeights>) { self.loaded = loaded }
}

extension PhiSchema: RunnableSchema {
    typealias Model = PhiModel
}

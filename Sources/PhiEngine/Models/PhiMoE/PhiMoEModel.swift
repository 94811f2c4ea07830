import PhiFormats

/// A Phi-3.5-MoE model (`model_type` "phimoe") loaded from a directory, weights memory-mapped
/// in place, the experts read only when a token is routed to them. Immutable and shareable,
/// like `Phi3Model`; sessions own a `ModelSequence<PhiMoEModel>` (KV cache and activations).
/// LongRoPE scales by its short/long mscales.
public final class PhiMoEModel: CausalLanguageModel, BlockForwardModel {
    static let ropeUsesMscales = true
    static let readsAllWeightsEachToken = false
    let loaded: LoadedModel<PhiMoEShape, PhiMoEWeights>
    let router: PhiMoERouter

    init(_ loaded: LoadedModel<PhiMoEShape, PhiMoEWeights>) {
        self.loaded = loaded
        router = PhiMoERouter(loaded.shape)
    }
}

extension PhiMoESchema: RunnableSchema {
    typealias Model = PhiMoEModel
}

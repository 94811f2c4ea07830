import PhiFormats

/// The sizes the phi forward pass indexes with, derived once from a validated config.json.
struct PhiShape: Sendable, Equatable {
    let hidden: Int
    let intermediate: Int
    let layers: Int
    let heads: Int
    let kvHeads: Int
    let headDim: Int
    /// Rotated dims per head (`headDim * partial_rotary_factor`: 32 of 80 on Phi-2).
    let ropeDim: Int
    let vocab: Int
    let layerNormEps: Float
    /// A LayerNorm over each query and key head before the rotation (`qk_layernorm`).
    let qkLayerNorm: Bool
    let maxPositions: Int

    var queryDim: Int { heads * headDim }
    var kvDim: Int { kvHeads * headDim }
    /// The widest input of any matrix (the prepared input vectors are sized for it).
    var maxColumns: Int { max(hidden, intermediate, queryDim) }

    init(_ config: ModelConfig) {
        hidden = config.hiddenSize
        intermediate = config.intermediateSize
        layers = config.layerCount
        heads = config.attentionHeads
        kvHeads = config.kvHeads
        headDim = config.headDim
        ropeDim = config.ropeDim
        vocab = config.vocabSize
        layerNormEps = Float(config.layerNormEps)
        qkLayerNorm = config.qkLayerNorm
        maxPositions = config.maxPositionEmbeddings
    }
}

import PhiFormats

/// The sizes the forward pass indexes with, derived once from a validated config.json.
/// Names follow the glossary in STYLE.md; shapes in comments elsewhere use these names.
struct Phi3Shape: Sendable, Equatable {
    let hidden: Int
    let intermediate: Int
    let layers: Int
    let heads: Int
    let kvHeads: Int
    let headDim: Int
    /// Rotated dims per head (`headDim * partial_rotary_factor`).
    let ropeDim: Int
    let vocab: Int
    let rmsNormEps: Float
    /// Tokens a query sees, itself included (transformers' `sliding_window`); 0: unbounded.
    let window: Int
    let maxPositions: Int

    /// Rows of the fused qkv_proj: queries, then keys, then values.
    var qkvRows: Int { (heads + 2 * kvHeads) * headDim }
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
        rmsNormEps = Float(config.rmsNormEps)
        window = config.slidingWindow ?? 0
        maxPositions = config.maxPositionEmbeddings
    }
}

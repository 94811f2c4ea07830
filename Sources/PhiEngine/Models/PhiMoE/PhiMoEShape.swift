import PhiFormats

/// The sizes the phimoe forward pass indexes with, derived once from a validated config.json.
struct PhiMoEShape: Sendable, Equatable {
    let hidden: Int
    /// Each expert's hidden width (`intermediate_size`).
    let intermediate: Int
    let layers: Int
    let heads: Int
    let kvHeads: Int
    let headDim: Int
    let vocab: Int
    /// LayerNorm epsilon (phimoe reads `rms_norm_eps` for it).
    let normEps: Float
    /// Tokens a query sees, itself included (transformers' `sliding_window`); 0: unbounded.
    let window: Int
    let maxPositions: Int
    let experts: Int
    let expertsPerToken: Int
    let routerJitter: Float

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
        vocab = config.vocabSize
        normEps = Float(config.rmsNormEps)
        window = config.slidingWindow ?? 0
        maxPositions = config.maxPositionEmbeddings
        experts = PhiMoESchema.experts(config)
        expertsPerToken = PhiMoESchema.expertsPerToken(config)
        routerJitter = Float(config.routerJitterNoise)
    }
}

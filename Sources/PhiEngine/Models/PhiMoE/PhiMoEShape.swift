import PhiFormats

/// The sizes the phimoe forward pass indexes with (TransformerSizes, `intermediate` being
/// each expert's hidden width, and these).
struct PhiMoEShape: ArchitectureShape {
    let sizes: TransformerSizes
    /// LayerNorm epsilon (phimoe reads `rms_norm_eps` for it).
    let normEps: Float
    let experts: Int
    let expertsPerToken: Int
    let routerJitter: Float
    /// The whole head rotates (phimoe reads no `partial_rotary_factor`).
    var ropeDim: Int { sizes.headDim }

    init(_ config: ModelConfig) {
        sizes = TransformerSizes(config)
        normEps = Float(config.rmsNormEps)
        let fields = config.fields(PhiMoESchema.Fields.self)
        experts = fields.experts
        expertsPerToken = fields.expertsPerToken
        routerJitter = Float(fields.routerJitterNoise)
    }
}

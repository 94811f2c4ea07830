import PhiFormats

/// The sizes the phi3 forward pass indexes with (TransformerSizes and these).
struct Phi3Shape: ArchitectureShape {
    let sizes: TransformerSizes
    /// Rotated dims per head (`headDim * partial_rotary_factor`).
    let ropeDim: Int
    let rmsNormEps: Float

    /// Rows of the fused qkv_proj: queries, then keys, then values.
    var qkvRows: Int { (sizes.heads + 2 * sizes.kvHeads) * sizes.headDim }

    init(_ config: ModelConfig) {
        sizes = TransformerSizes(config)
        ropeDim = config.ropeDim
        rmsNormEps = Float(config.rmsNormEps)
    }
}

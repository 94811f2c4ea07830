import PhiFormats

/// The sizes the phi forward pass indexes with (TransformerSizes and these).
struct PhiShape: ArchitectureShape {
    let sizes: TransformerSizes
    /// Rotated dims per head (`headDim * partial_rotary_factor`: 32 of 80 on Phi-2).
    let ropeDim: Int
    let layerNormEps: Float
    /// A LayerNorm over each query and key head before the rotation (`qk_layernorm`).
    let qkLayerNorm: Bool

    init(_ config: ModelConfig) {
        sizes = TransformerSizes(config)
        ropeDim = config.ropeDim
        let fields = config.fields(PhiSchema.Fields.self)
        layerNormEps = Float(fields.layerNormEps)
        qkLayerNorm = fields.qkLayerNorm
    }
}

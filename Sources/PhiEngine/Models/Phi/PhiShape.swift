import PhiFormats

/// The sizes the phi forward pass indexes with: TransformerSizes (whose `ropeDim`, from
/// `partial_rotary_factor`, is 32 of 80 on Phi-2) and these.
struct PhiShape: ArchitectureShape {
    let sizes: TransformerSizes
    let layerNormEps: Float
    /// A LayerNorm over each query and key head before the rotation (`qk_layernorm`).
    let qkLayerNorm: Bool

    init(_ config: ModelConfig) {
        let fields = config.fields(PhiSchema.Fields.self)
        sizes = TransformerSizes(config)
        layerNormEps = Float(fields.layerNormEps)
        qkLayerNorm = fields.qkLayerNorm
    }
}

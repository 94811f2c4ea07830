import PhiFormats

/// The sizes the llama forward pass indexes with (TransformerSizes and these).
struct LlamaShape: ArchitectureShape {
    let sizes: TransformerSizes
    /// Rotated dims per head: the whole head (LlamaSchema requires partial_rotary_factor 1).
    let ropeDim: Int
    let rmsNormEps: Float

    init(_ config: ModelConfig) {
        sizes = TransformerSizes(config)
        ropeDim = config.ropeDim
        rmsNormEps = Float(config.rmsNormEps)
    }
}

import PhiFormats

/// The shape of the architectures whose norms are RMSNorms and whose rotary covers `ropeDim`
/// dims of each head (phi3, llama): TransformerSizes and these two; nothing else of theirs
/// differs in what the forward pass indexes with.
struct RMSNormShape: ArchitectureShape {
    let sizes: TransformerSizes
    /// Rotated dims per head (`headDim * partial_rotary_factor`; llama: the whole head).
    let ropeDim: Int
    let rmsNormEps: Float

    init(_ config: ModelConfig) {
        sizes = TransformerSizes(config)
        ropeDim = config.ropeDim
        rmsNormEps = Float(config.rmsNormEps)
    }
}

import PhiFormats

/// The shape of the architectures whose norms are RMSNorms (phi3, llama): TransformerSizes
/// and the norms' epsilon; nothing else of theirs differs in what the forward pass indexes
/// with.
struct RMSNormShape: ArchitectureShape {
    let sizes: TransformerSizes
    let rmsNormEps: Float

    init(_ config: ModelConfig) {
        (sizes, rmsNormEps) = (TransformerSizes(config), Float(config.rmsNormEps))
    }
}

import PhiFormats

/// The sizes every architecture's forward pass indexes with, derived once from a validated
/// config.json. Names follow the glossary in STYLE.md; an architecture's shape (`RMSNormShape`,
/// `PhiShape`, `PhiMoEShape`) adds its own and reads these as its members.
struct TransformerSizes: Sendable, Equatable {
    let hidden: Int
    /// The MLP's hidden width (each expert's, for phimoe).
    let intermediate: Int
    let layers: Int
    let heads: Int
    let kvHeads: Int
    let headDim: Int
    let vocab: Int
    /// Tokens a query sees, itself included (transformers' `sliding_window`); 0: unbounded.
    let window: Int
    let maxPositions: Int
    /// Rotated dims at the start of each head, as `partial_rotary_factor` says (NeoX
    /// "rotate_half"); headDim for full rotary.
    let ropeDim: Int

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
        window = config.slidingWindow ?? 0
        maxPositions = config.maxPositionEmbeddings
        ropeDim = config.ropeDim
    }
}

/// An architecture's shape: the common sizes, read as its own members (`shape.hidden`), and
/// whatever else its forward pass needs, derived once from a validated config.json.
@dynamicMemberLookup
protocol ArchitectureShape: Sendable, Equatable {
    var sizes: TransformerSizes { get }
    /// Rotated dims at the start of each head. Default: `sizes.ropeDim`.
    var ropeDim: Int { get }
    init(_ config: ModelConfig)
}

extension ArchitectureShape {
    var ropeDim: Int { sizes.ropeDim }

    subscript<T>(dynamicMember path: KeyPath<TransformerSizes, T>) -> T { sizes[keyPath: path] }
}

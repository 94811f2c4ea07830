/// What one `model_type` is made of, as checkpoints store it: its modules (tensor names and
/// shapes from config.json, which are Linear/Embedding and so quantizable) in the order mlx
/// saves them, and the name of its output head. Everything else about a checkpoint
/// (which tensors are quantized, which leftovers loaders drop, what is missing or foreign)
/// follows from this through `ModelLayout`, the same for every command.
///
/// Adding an architecture: one schema file here, one line in `Architectures.all`, one model
/// folder in the engine.
public protocol ArchitectureSchema: Sendable {
    /// config.json's `model_type`.
    var modelType: String { get }

    /// Every module of a model of `config`, in the order mlx's `Model.parameters()` flattens
    /// them (attribute order of mlx-lm's model file), which is the order `mlx_lm.convert`
    /// saves tensors in. Shapes must not trap on a validated config.
    func modules(_ config: ModelConfig) -> [ModuleSpec]

    /// The output projection's module path (`lm_head`). When config.json ties the embeddings
    /// the model has no such module, and a checkpoint that still carries its weight has it
    /// ignored (see `IgnoredTensor`, the leftover policy).
    var outputHead: String { get }

    /// `partial_rotary_factor` when config.json leaves it out (transformers' config class
    /// default: 1.0 for phi3, 0.5 for phi).
    var defaultPartialRotaryFactor: Double { get }

    /// `max_position_embeddings` when config.json leaves it out (4096 for phi3, 2048 for phi).
    var defaultMaxPositions: Int { get }

    /// Checks the fields only this architecture reads (after the shared checks of
    /// `ModelConfig.validate`), throwing `ConfigError.invalidValue` for the first bad one.
    func validate(_ config: ModelConfig) throws(ConfigError)

    /// The names under which a checkpoint may store a stacked module (`[experts, out, in]`)
    /// as one float `[out, in]` weight per expert instead, in expert order (Hugging Face's
    /// `experts.E.w1.weight`); loaders read them as the stack, as mlx-lm's `sanitize` does.
    /// nil (the default): the module is only ever stored whole.
    func expertTensorNames(_ module: ModuleSpec) -> [String]?

    /// The type of the config.json fields only this architecture reads (its `Fields`, decoded
    /// from the same config.json); `NoArchitectureFields` by default.
    var fieldsType: any ArchitectureFields.Type { get }
}

extension ArchitectureSchema {
    public var defaultPartialRotaryFactor: Double { 1.0 }
    public var defaultMaxPositions: Int { 4096 }
    public func validate(_ config: ModelConfig) throws(ConfigError) {}
    public func expertTensorNames(_ module: ModuleSpec) -> [String]? { nil }
    public var fieldsType: any ArchitectureFields.Type { NoArchitectureFields.self }
}

/// One module of an architecture: a Linear, an Embedding or a norm, with its weight's shape
/// as config.json implies it (unquantized).
public struct ModuleSpec: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        /// `nn.Linear` (`[out, in]`), or a stack of them (`[experts, out, in]`).
        case linear
        /// `nn.Embedding` (`[vocab, hidden]`).
        case embedding
        /// RMSNorm (`weight [n]`) or LayerNorm (`weight [n]` and, with `hasBias`, `bias [n]`).
        case norm
    }

    /// `model.layers.0.self_attn.qkv_proj` (no `.weight`), exactly as in the HF checkpoint.
    public var path: String
    public var kind: Kind
    /// The float weight's shape.
    public var shape: [Int]
    /// A `bias` beside the weight (`[shape[count - 2]]` for a Linear, `[n]` for a norm).
    public var hasBias: Bool

    public init(_ path: String, _ kind: Kind, shape: [Int], hasBias: Bool = false) {
        self.path = path
        self.kind = kind
        self.shape = shape
        self.hasBias = hasBias
    }

    /// mlx quantizes Linear and Embedding layers only (`nn.quantize`'s default predicate),
    /// and only those whose last dimension the group size divides.
    public var isQuantizable: Bool { kind != .norm }

    public var weightName: String { path + ".weight" }
    public var scalesName: String { path + ".scales" }
    public var biasesName: String { path + ".biases" }
    public var biasName: String? { hasBias ? path + ".bias" : nil }

    /// The bias's shape: one value per output row (per norm element).
    public var biasShape: [Int] {
        kind == .norm ? shape : Array(shape.dropLast())
    }

    /// The tensors this module is stored as, in mlx's attribute order: `weight`, then (packed)
    /// `scales` and, for affine, `biases` (mxfp4/nvfp4/mxfp8 have none), then `bias`.
    public func tensorNames(quantized: Bool, affine: Bool = true) -> [String] {
        [weightName] + (quantized ? [scalesName] + (affine ? [biasesName] : []) : [])
            + (biasName.map { [$0] } ?? [])
    }
}

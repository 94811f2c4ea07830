/// An architecture's schema applied to one config.json: the modules a checkpoint of it holds,
/// how each is quantized, and what a given set of tensor names lacks or has too many of.
/// Convert, verify, inspect and the engine all read a checkpoint through this, so they accept
/// and refuse the same checkpoints.
public struct ModelLayout: Sendable {
    public let schema: any ArchitectureSchema
    public let config: ModelConfig
    /// In mlx's parameter order (see `ArchitectureSchema.modules`).
    public let modules: [ModuleSpec]
    private let index: [String: Int]

    /// The layout of `config`'s `model_type`; refuses one phikit has no schema for.
    public init(config: ModelConfig) throws(ConfigError) {
        guard let schema = Architectures.schema(for: config.modelType) else {
            throw .unsupportedArchitecture(path: config.source, modelType: config.modelType)
        }
        self.schema = schema
        self.config = config
        modules = schema.modules(config)
        index = Dictionary(
            modules.enumerated().map { ($1.path, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The module at `path` (`model.layers.0.mlp.down_proj`), nil if the model has none.
    public subscript(path: String) -> ModuleSpec? {
        index[path].map { modules[$0] }
    }

    /// The module a model implementation binds by name; a name its own schema lacks is a bug.
    public func module(_ path: String) -> ModuleSpec {
        guard let module = self[path] else {
            preconditionFailure("the \(schema.modelType) schema has no module \(path)")
        }
        return module
    }

    /// How config.json's `quantization` says `module` is stored: its per-module entry first
    /// (mixed recipes, layers left in float), else the default; never for a norm.
    public func quantization(of module: ModuleSpec) -> LayerQuantization {
        guard module.isQuantizable, let q = config.quantization else { return .notQuantized }
        return q.layer(module.path)
    }

    /// Sorts `names` (a checkpoint's tensors) into what the model takes, what it lacks, what
    /// the leftover policy drops and what is foreign. A Linear/Embedding `P` is stored packed
    /// exactly when `P.scales` is there (mlx-lm's rule); it then needs `P.biases` too, unless
    /// config.json gives it an mxfp4/nvfp4/mxfp8 mode.
    public func check(tensorNames names: some Sequence<String>) -> TensorSetCheck {
        let present = Set(names)
        var result = TensorSetCheck()
        var claimed: Set<String> = []
        for module in modules {
            if let parts = splitExperts(module, present: present) {
                result.splitModules[module.path] = parts
                claimed.formUnion(parts)
                result.missing += parts.filter { !present.contains($0) }
                continue
            }
            let packed = module.isQuantizable && present.contains(module.scalesName)
            if packed { result.packedModules.insert(module.path) }
            var affine = true
            if case .quantized(_, _, let mode) = quantization(of: module) {
                affine = MicroscaledMode(rawValue: mode) == nil
            }
            for name in module.tensorNames(quantized: packed, affine: affine) {
                claimed.insert(name)
                if !present.contains(name) { result.missing.append(name) }
            }
        }
        for name in present.subtracting(claimed).sorted() {
            if let why = IgnoredTensor.classify(name, in: self) {
                result.ignored.append((name, why))
            } else {
                result.unexpected.append(name)
            }
        }
        return result
    }

    /// The per-expert names `module` is stored under, when the stacked weight is absent and
    /// at least one of them is present (a float checkpoint in the Hugging Face layout).
    private func splitExperts(_ module: ModuleSpec, present: Set<String>) -> [String]? {
        guard !present.contains(module.weightName),
            let parts = schema.expertTensorNames(module), parts.contains(where: present.contains)
        else { return nil }
        return parts
    }
}

/// What `ModelLayout.check` found.
public struct TensorSetCheck: Sendable {
    /// Modules stored as MLX affine quantization (`P.scales` present).
    public var packedModules: Set<String> = []
    /// Stacked modules stored as one float weight per expert (`expertTensorNames`): module
    /// path → those tensor names, in expert order.
    public var splitModules: [String: [String]] = [:]
    /// Tensors the model needs that are not there, in module order.
    public var missing: [String] = []
    /// Tensors the leftover policy drops, by name.
    public var ignored: [(name: String, reason: IgnoredTensor)] = []
    /// Tensors the model has no place for, by name.
    public var unexpected: [String] = []

    public var isAcceptable: Bool { missing.isEmpty && unexpected.isEmpty }

    /// Every problem, missing tensors first; `fileOf` names the file holding a tensor.
    public func errors(
        directory: String, fileOf: (String) -> String?
    ) -> [TensorSetError] {
        missing.map { .missingTensor(name: $0, directory: directory) }
            + unexpected.map { .unexpectedTensor(name: $0, file: fileOf($0) ?? directory) }
    }

    /// Throws the first problem (what loaders and convert do).
    public func requireAcceptable(
        directory: String, fileOf: (String) -> String?
    ) throws(TensorSetError) {
        if let first = errors(directory: directory, fileOf: fileOf).first { throw first }
    }
}

extension ModelWeights {
    /// This directory's tensors checked against `layout`; throws the first problem.
    public func requireTensors(of layout: ModelLayout) throws(TensorSetError) -> TensorSetCheck {
        let check = layout.check(tensorNames: tensorNames)
        try check.requireAcceptable(directory: directory) { tensor($0)?.file.path }
        return check
    }
}

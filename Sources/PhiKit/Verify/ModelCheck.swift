import Foundation
import PhiFormats

/// Layer 3: the tensors are exactly those config.json implies for its architecture's schema
/// (`ModelLayout`: names, shapes, dtypes, the leftover policy shared with run and convert),
/// and every quantized layer
/// is laid out as its `quantization` (per-layer overrides first) says: `weight` uint32
/// `[out, in·bits/32]`, `scales` and `biases` `[out, in/group]` in one float dtype.
struct ModelCheck {
    let directory: String
    let weights: WeightSet
    private(set) var outcome = LayerOutcome(.model)
    /// Tensors the leftover policy drops (`IgnoredTensor`), known after `run()`.
    private(set) var ignoredTensors: Set<String> = []

    init(directory: String, weights: WeightSet) {
        self.directory = directory
        self.weights = weights
    }

    /// Returns the config when it is valid (the text layer and the smoke test use it).
    mutating func run() -> (ModelConfig?, LayerOutcome) {
        guard let config = loadConfig() else { return (nil, outcome) }
        // A weight file the structure layer could not read hides its tensors; reporting them all
        // as missing would bury the one real finding.
        let unreadable = weights.selected.filter { weights.opened[$0] == nil }
        if weights.tensors.isEmpty && !unreadable.isEmpty {
            outcome.skipped = true
            outcome.summary = "no readable safetensors to check against config.json"
            return (config, outcome)
        }
        guard let layout = try? ModelLayout(config: config) else { return (config, outcome) }
        let tensorSet = layout.check(tensorNames: weights.tensors.keys)
        for module in layout.modules {
            if tensorSet.packedModules.contains(module.path) {
                checkQuantized(module, layout.quantization(of: module), config.quantization)
            } else if let parts = tensorSet.splitModules[module.path] {
                for part in parts { checkFloat(part, shape: Array(module.shape.dropFirst())) }
            } else {
                checkFloat(module.weightName, shape: module.shape)
            }
            if let bias = module.biasName { checkFloat(bias, shape: module.biasShape) }
        }
        report(tensorSet, layout: layout)
        let quantizedLayers = tensorSet.packedModules.count
        let q =
            config.quantization.map {
                $0.mode == "affine" ? " (\($0.bits)-bit g\($0.groupSize))" : " (\($0.mode))"
            } ?? ""
        outcome.summary =
            "\(weights.tensors.count) tensors against config.json: \(config.modelType), "
            + "\(config.layerCount) layers, hidden \(config.hiddenSize), vocab \(config.vocabSize)"
            + (quantizedLayers > 0 ? ", \(quantizedLayers) quantized layers\(q)" : "")
        return (config, outcome)
    }

    private mutating func loadConfig() -> ModelConfig? {
        let path = directory + "/config.json"
        let data: [UInt8]
        do {
            data = try LocalFile.read(path)
        } catch let error where error.errno == ENOENT && error.wrongType == nil {
            outcome.error(
                "missing_config", file: "config.json", "is missing: the model cannot be loaded")
            outcome.summary = "no config.json"
            return nil
        } catch {
            outcome.error(
                "invalid_config", file: "config.json", ConfigError.unreadable(error).problem)
            outcome.summary = "config.json cannot be read"
            return nil
        }
        do {
            let config = try ModelConfig(
                data: Array(data), source: "config.json", validating: false)
            try config.validate()
            return config
        } catch {
            outcome.error("invalid_config", file: "config.json", error.problem)
            outcome.summary = "config.json is not a valid Phi-3 config; tensors not checked"
            return nil
        }
    }

    /// A float weight (a norm, or a Linear/Embedding left unquantized); absent ones are
    /// reported with the tensor set.
    private mutating func checkFloat(_ name: String, shape: [Int]) {
        guard let (file, info) = weights.tensors[name] else { return }
        if info.dtype == .u32 {
            outcome.error(
                "wrong_dtype", file: file, tensor: name,
                "is packed (uint32) but has no .scales beside it")
        } else {
            expect(
                name, file: file, info, dtypes: [.f32, .f16, .bf16], shape: shape,
                dtype: "expected float32, float16 or bfloat16",
                shape: ", config.json implies \(shape)")
        }
    }

    /// Reports a tensor whose dtype is not one of `dtypes`, or whose shape is not `shape`;
    /// the caller's words say what was expected.
    private mutating func expect(
        _ name: String, file: String, _ info: TensorInfo, dtypes: [DType], shape: [Int],
        dtype dtypeExpectation: String, shape shapeExpectation: String
    ) {
        if !dtypes.contains(info.dtype) {
            outcome.error(
                "wrong_dtype", file: file, tensor: name,
                "is \(info.dtype.pythonName); \(dtypeExpectation)")
        } else if info.shape != shape {
            outcome.error(
                "wrong_shape", file: file, tensor: name,
                "has shape \(info.shape)\(shapeExpectation)")
        }
    }

    /// A Linear/Embedding stored as MLX affine quantization (its `.scales` is there).
    private mutating func checkQuantized(
        _ module: ModuleSpec, _ layer: LayerQuantization, _ quantization: QuantizationConfig?
    ) {
        let (module, shape) = (module.path, module.shape)
        let weight = weights.tensors[module + ".weight"]
        let scales = weights.tensors[module + ".scales"]
        let biases = weights.tensors[module + ".biases"]
        guard case .quantized(let group, let bits, let mode) = layer else {
            let why =
                quantization == nil
                ? "config.json has no quantization" : "config.json leaves it unquantized (false)"
            outcome.error(
                "unexpected_quantization", file: scales?.file, tensor: module + ".scales",
                "marks \(module) as quantized, but \(why)")
            return
        }
        // [rows, cols], or [experts, rows, cols] for stacked experts: groups run along cols.
        let (lead, cols) = (Array(shape.dropLast()), shape.last ?? 0)
        guard cols % group == 0 else {
            outcome.error(
                "wrong_shape", file: scales?.file, tensor: module + ".scales",
                "\(module) has \(cols) input columns, which groups of \(group) do not divide")
            return
        }
        guard let (wFile, w) = weight else { return }
        let packed = lead + [cols * bits / 32]
        if w.dtype != .u32 {
            outcome.error(
                "wrong_dtype", file: wFile, tensor: w.name,
                "is \(w.dtype.pythonName); a quantized weight is uint32")
        } else if w.shape != packed {
            let found =
                Array(w.shape.dropLast()) == lead && ((w.shape.last ?? 0) * 32) % cols == 0
                ? " (\((w.shape.last ?? 0) * 32 / cols)-bit packing)" : ""
            outcome.error(
                "wrong_shape", file: wFile, tensor: w.name,
                "has shape \(w.shape)\(found); \(bits)-bit quantization of \(shape) is \(packed)")
        }
        let groups = lead + [cols / group]
        if mode != "affine" {
            checkMicroscaled(module, mode: mode, scales: scales, biases: biases, groups: groups)
            return
        }
        for (name, entry) in [(module + ".scales", scales), (module + ".biases", biases)] {
            guard let (file, info) = entry else { continue }
            expect(
                name, file: file, info, dtypes: [.f32, .f16, .bf16], shape: groups,
                dtype: "scales and biases are floats",
                shape: "; groups of \(group) over \(shape) give \(groups)")
        }
        if let s = scales?.info, let b = biases?.info, s.dtype != b.dtype {
            outcome.error(
                "wrong_dtype", file: biases?.file, tensor: b.name,
                "is \(b.dtype.pythonName) but the scales are \(s.dtype.pythonName)")
        }
    }

    /// The scales of an mxfp4/nvfp4/mxfp8 layer: one uint8 per group; no biases.
    private mutating func checkMicroscaled(
        _ module: String, mode: String, scales: (file: String, info: TensorInfo)?,
        biases: (file: String, info: TensorInfo)?, groups: [Int]
    ) {
        let name = module + ".scales"
        if let (file, info) = scales {
            expect(
                name, file: file, info, dtypes: [.u8], shape: groups,
                dtype: "\(mode) scales are uint8", shape: "; \(mode) groups give \(groups)")
        }
        if let (file, info) = biases {
            outcome.error(
                "unexpected_tensor", file: file, tensor: info.name,
                "\(mode) layers have no biases")
        }
    }

    /// What the tensor set lacks, what it has no place for (errors, as run and convert refuse
    /// them) and what the leftover policy drops (warnings: every command accepts them).
    private mutating func report(_ tensorSet: TensorSetCheck, layout: ModelLayout) {
        for name in tensorSet.missing {
            let untiedHead =
                name == layout.schema.outputHead + ".weight" && !layout.config.tieWordEmbeddings
            missing(
                name,
                note: untiedHead
                    ? "tie_word_embeddings is false, so the model needs its own lm_head" : nil)
        }
        ignoredTensors = Set(tensorSet.ignored.map(\.name))
        for (name, why) in tensorSet.ignored {
            outcome.warning(
                "ignored_tensor", file: weights.tensors[name]?.file, tensor: name, why.reason)
        }
        for name in tensorSet.unexpected {
            let file = weights.tensors[name]?.file
            let error = TensorSetError.unexpectedTensor(name: name, file: file ?? directory)
            outcome.error(
                "unexpected_tensor", file: file, tensor: name, error.problem, hint: error.hint)
        }
    }

    private mutating func missing(_ name: String, note: String?) {
        // Already reported by the structure layer: its shard is missing or unreadable.
        guard !weights.unavailable.contains(name) else { return }
        let shard = weights.index?.weightMap[name]
        let error = TensorSetError.missingTensor(name: name, directory: directory)
        outcome.error(
            "missing_tensor", file: shard, tensor: name,
            error.problem + (note.map { ": \($0)" } ?? ""), hint: error.hint)
    }
}

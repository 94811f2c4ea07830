import Foundation
import PhiFormats

/// Layer 3: the tensors are exactly those config.json implies for a Phi-3 model — names,
/// shapes, dtypes, `lm_head` absent iff the embeddings are tied — and every quantized layer
/// is laid out as its `quantization` (per-layer overrides first) says: `weight` uint32
/// `[out, in·bits/32]`, `scales` and `biases` `[out, in/group]` in one float dtype.
struct ModelCheck {
    let directory: String
    let weights: WeightSet
    private(set) var outcome = LayerOutcome(.model)
    private var used: Set<String> = []

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
        var quantizedLayers = 0
        for (name, shape) in config.expectedTensorShapes() {
            let module = String(name.dropLast(".weight".count))
            if shape.count == 2, weights.tensors[module + ".scales"] != nil {
                checkQuantized(module, shape: shape, config.quantization)
                quantizedLayers += 1
            } else {
                checkFloat(name, shape: shape, tied: config.tieWordEmbeddings)
            }
        }
        checkLeftovers(tied: config.tieWordEmbeddings)
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
        guard let data = FileManager.default.contents(atPath: path) else {
            outcome.error(
                "missing_config", file: "config.json", "is missing: the model cannot be loaded")
            outcome.summary = "no config.json"
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

    /// A float weight (a norm, or a Linear/Embedding left unquantized).
    private mutating func checkFloat(_ name: String, shape: [Int], tied: Bool) {
        guard let (file, info) = take(name) else {
            missing(
                name,
                note: name == "lm_head.weight" && !tied
                    ? "tie_word_embeddings is false, so the model needs its own lm_head" : nil)
            return
        }
        if info.dtype == .u32 {
            outcome.error(
                "wrong_dtype", file: file, tensor: name,
                "is packed (uint32) but has no .scales beside it")
        } else if ![.f32, .f16, .bf16].contains(info.dtype) {
            outcome.error(
                "wrong_dtype", file: file, tensor: name,
                "is \(info.dtype.pythonName); expected float32, float16 or bfloat16")
        } else if info.shape != shape {
            outcome.error(
                "wrong_shape", file: file, tensor: name,
                "has shape \(info.shape), config.json implies \(shape)")
        }
    }

    /// A Linear/Embedding stored as MLX affine quantization.
    private mutating func checkQuantized(
        _ module: String, shape: [Int], _ quantization: QuantizationConfig?
    ) {
        let weight = take(module + ".weight")
        let scales = take(module + ".scales")
        let biases = take(module + ".biases")
        guard let quantization,
            case .quantized(let group, let bits, let mode) = quantization.layer(module)
        else {
            let why =
                quantization == nil
                ? "config.json has no quantization" : "config.json leaves it unquantized (false)"
            outcome.error(
                "unexpected_quantization", file: scales?.file, tensor: module + ".scales",
                "marks \(module) as quantized, but \(why)")
            return
        }
        let (rows, cols) = (shape[0], shape[1])
        guard cols % group == 0 else {
            outcome.error(
                "wrong_shape", file: scales?.file, tensor: module + ".scales",
                "\(module) has \(cols) input columns, which groups of \(group) do not divide")
            return
        }
        guard let (wFile, w) = weight else { return missing(module + ".weight", note: nil) }
        let packed = [rows, cols * bits / 32]
        if w.dtype != .u32 {
            outcome.error(
                "wrong_dtype", file: wFile, tensor: w.name,
                "is \(w.dtype.pythonName); a quantized weight is uint32")
        } else if w.shape != packed {
            let found =
                w.shape.count == 2 && w.shape[0] == rows && (w.shape[1] * 32) % cols == 0
                ? " (\(w.shape[1] * 32 / cols)-bit packing)" : ""
            outcome.error(
                "wrong_shape", file: wFile, tensor: w.name,
                "has shape \(w.shape)\(found); \(bits)-bit quantization of \(shape) is \(packed)")
        }
        let groups = [rows, cols / group]
        if mode != "affine" {
            checkMicroscaled(module, mode: mode, scales: scales, biases: biases, groups: groups)
            return
        }
        for (name, entry) in [(module + ".scales", scales), (module + ".biases", biases)] {
            guard let (file, info) = entry else {
                missing(name, note: nil)
                continue
            }
            if ![.f32, .f16, .bf16].contains(info.dtype) {
                outcome.error(
                    "wrong_dtype", file: file, tensor: name,
                    "is \(info.dtype.pythonName); scales and biases are floats")
            } else if info.shape != groups {
                outcome.error(
                    "wrong_shape", file: file, tensor: name,
                    "has shape \(info.shape); groups of \(group) over \(shape) give \(groups)")
            }
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
            if info.dtype != .u8 {
                outcome.error(
                    "wrong_dtype", file: file, tensor: name,
                    "is \(info.dtype.pythonName); \(mode) scales are uint8")
            } else if info.shape != groups {
                outcome.error(
                    "wrong_shape", file: file, tensor: name,
                    "has shape \(info.shape); \(mode) groups give \(groups)")
            }
        } else {
            missing(name, note: nil)
        }
        if let (file, info) = biases {
            outcome.error(
                "unexpected_tensor", file: file, tensor: info.name,
                "\(mode) layers have no biases")
        }
    }

    /// Tensors config.json has no place for.
    private mutating func checkLeftovers(tied: Bool) {
        for (name, location) in weights.tensors.sorted(by: { $0.key < $1.key })
        where !used.contains(name) {
            if name.hasSuffix(".rotary_emb.inv_freq") {
                outcome.warning(
                    "derived_tensor", file: location.file, tensor: name,
                    "is a rotary-embedding buffer of an old checkpoint; loaders ignore it")
            } else if tied && name.hasPrefix("lm_head.") {
                outcome.error(
                    "unexpected_tensor", file: location.file, tensor: name,
                    "is present although config.json ties the embeddings "
                        + "(tie_word_embeddings: true)")
            } else {
                outcome.error(
                    "unexpected_tensor", file: location.file, tensor: name,
                    "is not part of the model config.json describes")
            }
        }
    }

    private mutating func take(_ name: String) -> (file: String, info: TensorInfo)? {
        guard let found = weights.tensors[name] else { return nil }
        used.insert(name)
        return found
    }

    private mutating func missing(_ name: String, note: String?) {
        // Already reported by the structure layer: its shard is missing or unreadable.
        guard !weights.unavailable.contains(name) else { return }
        let shard = weights.index?.weightMap[name]
        outcome.error(
            "missing_tensor", file: shard, tensor: name,
            "is missing" + (note.map { ": \($0)" } ?? ""),
            hint: "the weights do not match config.json; download or convert the model again")
    }
}

import Foundation
import PhiFormats

/// One source tensor: the mapped file that holds it and its header entry.
struct SourceTensor {
    let file: SafeTensorsFile
    let info: TensorInfo
}

/// What happens to one module's weights, producing its output tensors in mlx order.
struct ConvertStep {
    enum Kind {
        /// `inputs` → `outputs[0]`: a raw copy when the dtypes agree, else a float cast. Several
        /// inputs (a stacked module stored per expert) are written one after the other.
        case cast
        /// float `inputs` (one after the other, as for cast) → packed weight, scales
        /// (, biases: affine only).
        case quantize
        /// packed weight, scales (, biases) → one float weight (in `computeDType`).
        case dequantize
        /// A base weight (float, or packed as `quantization` says) plus a LoRA/DoRA adapter
        /// (`adapter`) → the fused weight, packed again when `outputs` has scales (`fuse`).
        case fuse
    }

    var kind: Kind
    var inputs: [SourceTensor]
    var outputs: [TensorSpec]
    var quantization: QuantizationScheme?
    /// quantize: the dtype the weight is rounded to before quantizing (mlx casts first), which
    /// is also the affine scales' dtype. dequantize: the dtype affine scales/biases are cast
    /// to first, which is also the output's (micro-scaled modes: mlx's default, bfloat16).
    var computeDType: DType
    /// Parameters as mlx_lm's `get_total_parameters` counts them.
    var parameters: Int
    /// `.fuse` only: the adapter of this module.
    var adapter: ModuleAdapter? = nil
}

/// Everything `convert` will do, decided and validated before any output exists: the source
/// tensors checked against config.json, each output tensor's dtype and shape in the order
/// mlx_lm saves them, the shard each lands in, and the rewritten config.json.
struct ConvertPlan {
    let steps: [ConvertStep]
    /// Output shards in order: file name and its tensors in data order.
    let shards: [(file: String, tensors: [TensorSpec])]
    /// The index's `total_size` (tensor bytes) and `total_parameters`.
    let totalSize: Int
    let totalParameters: Int
    /// mlx_lm's `compute_bits_per_weight` (see `ropeFrequencyBytes`).
    let bitsPerWeight: Double
    /// The output's quantization (nil for a float output): the default scheme of config.json.
    let quantization: QuantizationScheme?
    /// `--quant-predicate`'s recipe, if any (every quantized layer then has its own entry).
    let recipe: MixedQuantRecipe?
    let quantizedTensorCount: Int
    /// config.json bytes, as mlx_lm's `save_config` writes them.
    let configBytes: [UInt8]
    /// Source bytes the steps read.
    let bytesToRead: Int

    var outputTensors: [TensorSpec] { steps.flatMap(\.outputs) }

    /// `rewrite` (fuse) edits the steps once they are checked, before sizes and shards are
    /// computed from them.
    static func make(
        sourceDirectory dir: String, options: ConvertOptions,
        rewrite: ((inout [ConvertStep], ModelLayout) throws -> Void)? = nil
    ) throws -> ConvertPlan {
        let configPath = (dir as NSString).appendingPathComponent("config.json")
        let config = try ModelConfig.load(directory: dir)  // model_type, sizes, rope: validated
        // Copied into the output as it is, so checked as `run` reads it: a broken one was
        // copied and convert reported success.
        _ = try GenerationConfig.load(directory: dir)
        let layout = try ModelLayout(config: config)
        let rawConfig: JSONValue
        do {
            rawConfig = try JSONValue(parsing: try readMetadataFile(configPath))
        } catch let error as JSONError {
            throw ConfigError.invalidJSON(path: configPath, detail: error.message)
        }
        let weights = try ModelWeights(directory: dir)  // missing shards, corrupt headers
        // Missing and foreign tensors refused, leftovers the policy drops left out of the output.
        let tensorSet = try weights.requireTensors(of: layout)
        let castTo =
            options.dtype
            ?? (options.castsToConfigDType ? ConvertedConfig.defaultDType(rawConfig) : nil)

        var builder = StepBuilder(
            layout: layout, weights: weights, options: options, castTo: castTo,
            split: tensorSet.splitModules)
        try builder.build()
        if options.quantize, builder.sourceIsQuantized {
            throw ConvertError.alreadyQuantized(
                directory: dir, bits: config.quantization?.bits ?? 0)
        }
        if options.dequantize, !builder.sourceIsQuantized {
            throw ConvertError.notQuantized(directory: dir)
        }

        var steps = builder.steps
        try rewrite?(&steps, layout)
        let outputs = steps.flatMap(\.outputs)
        let totalSize = outputs.reduce(0) { $0 + $1.byteCount }
        let totalParameters = steps.reduce(0) { $0 + $1.parameters }
        let quantization = builder.quantization  // set only with `options.quantize`
        let generation = ConvertedConfig.readGenerationConfig(directory: dir)
        let configBytes = ConvertedConfig.bytes(
            source: rawConfig, generationConfig: generation, quantization: quantization,
            layers: builder.layerEntries, dequantize: options.dequantize)
        let ropeBytes = ropeFrequencyBytes(rawConfig, config)
        return ConvertPlan(
            steps: steps,
            shards: makeShards(outputs, maxBytes: options.maxShardSize),
            totalSize: totalSize, totalParameters: totalParameters,
            bitsPerWeight: totalParameters == 0
                ? 0 : Double((totalSize + ropeBytes) * 8) / Double(totalParameters),
            quantization: quantization, recipe: options.quantize ? options.quantPredicate : nil,
            quantizedTensorCount: steps.filter { $0.kind == .quantize }.count,
            configBytes: configBytes,
            bytesToRead: steps.reduce(0) { $0 + $1.inputs.reduce(0) { $0 + $1.info.byteCount } })
    }

    /// mlx_lm's `make_shards`: walk the tensors in save order, start a new shard when the next
    /// tensor would push this one past the limit (a tensor larger than the limit gets its own).
    /// One shard is `model.safetensors`, more are `model-0000i-of-0000N.safetensors`.
    static func makeShards(
        _ tensors: [TensorSpec], maxBytes: Int
    ) -> [(file: String, tensors: [TensorSpec])] {
        var groups: [[TensorSpec]] = []
        var size = 0
        for t in tensors {
            if groups.isEmpty || size + t.byteCount > maxBytes {
                groups.append([])
                size = 0
            }
            groups[groups.count - 1].append(t)
            size += t.byteCount
        }
        return groups.enumerated().map { i, group in
            let name =
                groups.count == 1
                ? "model.safetensors"
                : String(format: "model-%05d-of-%05d.safetensors", i + 1, groups.count)
            return (name, group)
        }
    }

    /// mlx_lm's bits-per-weight divides the bytes of *every* array in the model by the
    /// parameter count, and a LongRoPE layer (`SuScaledRoPE`) keeps its float32 `_freqs`
    /// (ropeDim/2 values per layer) as an array that is not a parameter. Counting them is
    /// what makes our figure print the same digits as mlx_lm's (4.523 rather than 4.520).
    static func ropeFrequencyBytes(_ raw: JSONValue, _ config: ModelConfig) -> Int {
        guard let scaling = raw["rope_scaling"], let type = scaling["type"]?.stringValue,
            type == "longrope" || type == "su", scaling["long_factor"] != nil
        else { return 0 }
        return config.layerCount * ((config.ropeDim + 1) / 2) * 4
    }
}

/// Walks the architecture's modules in mlx's parameter order (the schema's order), matching
/// each against the source tensors and deciding its step.
private struct StepBuilder {
    let layout: ModelLayout
    let weights: ModelWeights
    let options: ConvertOptions
    let castTo: DType?
    /// Stacked expert modules the source stores one tensor per expert (module → names).
    let split: [String: [String]]
    /// The requested quantization (validated before any tensor is looked at).
    var quantization: QuantizationScheme?
    /// config.json's per-layer entries, in mlx's order: a recipe gives every quantized layer
    /// one, whose group_size is the option as given (null without --q-group-size, as mlx-lm
    /// writes it; the loader then takes the model's).
    var layerEntries: [(key: String, value: JSONValue)] = []
    var steps: [ConvertStep] = []
    var sourceIsQuantized = false

    var config: ModelConfig { layout.config }

    mutating func build() throws {
        if options.quantize { quantization = try options.quantizationScheme() }
        // mlx-lm places the recipe's layer index by the first down_proj; a model without
        // one (phi: fc1/fc2) is refused there with "does not have expected keys", so here.
        if let recipe = options.quantPredicate,
            !layout.modules.contains(where: { $0.path.contains("down_proj") })
        {
            throw ConvertError.badOption(
                "--quant-predicate \(recipe.rawValue) needs down_proj layers, which a "
                    + "\(config.modelType) model does not have (mlx_lm refuses it too)",
                hint: "quantize it uniformly: --bits and --group-size, or --q-mode")
        }
        for m in layout.modules {
            if let parts = split[m.path] {
                try addFloatSource(m.path, shape: m.shape, linear: true, parts: parts)
            } else if m.isQuantizable, weights.tensor(m.scalesName) != nil {
                try addQuantizedSource(m)
            } else {
                try addFloatSource(m.path, shape: m.shape, linear: m.isQuantizable)
            }
            if let bias = m.biasName {  // after weight, scales, biases: mlx's attribute order
                let b = try source(bias)
                try expectFloat(b)
                try expectShape(b, m.biasShape)
                steps.append(cast(b, to: castTo ?? b.info.dtype, parameters: b.info.elementCount))
            }
        }
    }

    /// A float Linear/Embedding/norm weight: quantize it, or copy/cast it. `parts`: the
    /// per-expert tensors a stacked `[experts, out, in]` module is stored as, which the step
    /// reads one after the other as the stack (mlx-lm's `sanitize` stacks them the same way).
    private mutating func addFloatSource(
        _ path: String, shape: [Int], linear: Bool, parts: [String]? = nil
    ) throws {
        let inputs = try (parts ?? [path + ".weight"]).map(source)
        for part in inputs {
            try expectFloat(part)
            try expectShape(part, parts == nil ? shape : Array(shape.dropFirst()))
            guard part.info.dtype == inputs[0].info.dtype else {
                throw ConvertError.wrongDType(
                    name: part.info.name, file: part.file.path, dtype: part.info.dtype,
                    expected: inputs[0].info.dtype.pythonName + " (as the other experts)")
            }
        }
        let w = inputs[0]
        let dtype = castTo ?? w.info.dtype
        let count = shape.reduce(1, *)
        // mlx-lm checks the default group size, then asks the recipe for the layer's bits.
        if linear, let q = quantization, q.canQuantize(shape: shape) {
            var layer = q
            if let recipe = options.quantPredicate {
                let bits = recipe.bits(forModule: path, layerCount: config.layerCount)
                layer = try QuantizationScheme(bits: bits, groupSize: q.groupSize)
                layerEntries.append(
                    (
                        path,
                        .object([
                            ("group_size", options.groupSize.map { .int($0) } ?? .null),
                            ("bits", .int(bits)), ("mode", .string("affine")),
                        ])
                    ))
            }
            let (wShape, sShape) = layer.quantizedShapes(for: shape)
            let scalesType = layer.scalesDType(weightDType: dtype)
            var outputs = [
                TensorSpec(name: path + ".weight", dtype: .u32, shape: wShape),
                TensorSpec(name: path + ".scales", dtype: scalesType, shape: sShape),
            ]
            if layer.hasBiases {
                outputs.append(TensorSpec(name: path + ".biases", dtype: dtype, shape: sShape))
            }
            steps.append(
                ConvertStep(
                    kind: .quantize, inputs: inputs, outputs: outputs,
                    quantization: layer, computeDType: dtype, parameters: count))
        } else if parts != nil {
            let weight = TensorSpec(name: path + ".weight", dtype: dtype, shape: shape)
            steps.append(step(.cast, inputs, to: weight, parameters: count))
        } else {
            steps.append(cast(w, to: dtype, parameters: count))
        }
    }

    /// A packed MLX layer: dequantize it, or carry it over (casting affine scales and biases,
    /// as mlx's dtype pass casts every float parameter; uint8 scales stay as they are).
    private mutating func addQuantizedSource(_ module: ModuleSpec) throws {
        let (path, shape) = (module.path, module.shape)
        sourceIsQuantized = true
        guard case .quantized(let group, let bits, let mode) = layout.quantization(of: module)
        else {
            throw ConvertError.inconsistentQuantization(
                module: path, detail: "has .scales but config.json does not quantize it")
        }
        guard let scheme = try? QuantizationScheme(mode: mode, bits: bits, groupSize: group)
        else {
            throw ConvertError.inconsistentQuantization(
                module: path, detail: "\(mode) \(bits)-bit group \(group) is not supported")
        }
        guard scheme.canQuantize(shape: shape) else {
            throw ConvertError.inconsistentQuantization(
                module: path, detail: "shape \(shape) cannot hold groups of \(group)")
        }
        let (wShape, sShape) = scheme.quantizedShapes(for: shape)
        let w = try source(path + ".weight")
        let s = try source(path + ".scales")
        guard w.info.dtype == .u32 else {
            throw ConvertError.wrongDType(
                name: w.info.name, file: w.file.path, dtype: w.info.dtype,
                expected: "uint32 (packed)")
        }
        try expectShape(w, wShape)
        try expectShape(s, sShape)
        var inputs = [w, s]
        if scheme.hasBiases {
            let b = try source(path + ".biases")
            try expectFloat(s)
            try expectShape(b, sShape)
            guard b.info.dtype == s.info.dtype else {
                throw ConvertError.wrongDType(
                    name: b.info.name, file: b.file.path, dtype: b.info.dtype,
                    expected: s.info.dtype.pythonName + " (as the scales)")
            }
            inputs.append(b)
        } else if s.info.dtype != .u8 {
            throw ConvertError.wrongDType(
                name: s.info.name, file: s.file.path, dtype: s.info.dtype,
                expected: "uint8 (\(mode) scales)")
        }
        // Affine: scales/biases are cast first and the result has their type. Micro-scaled:
        // mlx_lm dequantizes to mlx's default, bfloat16, whatever --dtype says.
        let dtype = scheme.hasBiases ? (castTo ?? s.info.dtype) : .bf16
        let count = shape.reduce(1, *)
        if options.dequantize {
            let weight = TensorSpec(name: path + ".weight", dtype: dtype, shape: shape)
            steps.append(
                step(.dequantize, inputs, to: weight, quantization: scheme, parameters: count))
        } else {
            steps.append(cast(w, to: .u32, parameters: count))
            for t in inputs.dropFirst() {
                steps.append(cast(t, to: scheme.hasBiases ? dtype : .u8, parameters: 0))
            }
        }
    }

    private func cast(_ t: SourceTensor, to dtype: DType, parameters: Int) -> ConvertStep {
        step(
            .cast, [t], to: TensorSpec(name: t.info.name, dtype: dtype, shape: t.info.shape),
            parameters: parameters)
    }

    /// A step with one output, computed in the output's dtype.
    private func step(
        _ kind: ConvertStep.Kind, _ inputs: [SourceTensor], to output: TensorSpec,
        quantization: QuantizationScheme? = nil, parameters: Int
    ) -> ConvertStep {
        ConvertStep(
            kind: kind, inputs: inputs, outputs: [output], quantization: quantization,
            computeDType: output.dtype, parameters: parameters)
    }

    private func source(_ name: String) throws -> SourceTensor {
        guard let (file, info) = weights.tensor(name) else {
            // The index promised it in a shard that is not there: say which file to fetch.
            if let shard = weights.index?.weightMap[name],
                !weights.files.contains(where: { ($0.path as NSString).lastPathComponent == shard })
            {
                throw WeightsError.missingShard(directory: weights.directory, file: shard)
            }
            throw TensorSetError.missingTensor(name: name, directory: weights.directory)
        }
        return SourceTensor(file: file, info: info)
    }

    private func expectShape(_ t: SourceTensor, _ shape: [Int]) throws {
        guard t.info.shape == shape else {
            throw ConvertError.wrongShape(
                name: t.info.name, file: t.file.path, expected: shape,
                actual: t.info.shape)
        }
    }

    private func expectFloat(_ t: SourceTensor) throws {
        guard [.f32, .f16, .bf16].contains(t.info.dtype) else {
            throw ConvertError.wrongDType(
                name: t.info.name, file: t.file.path, dtype: t.info.dtype,
                expected: "float32, float16 or bfloat16")
        }
    }
}

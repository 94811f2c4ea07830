import Foundation
import PhiFormats

/// An mlx-lm adapter folder (adapters.safetensors + adapter_config.json) checked against a
/// base model: which modules mlx_lm would wrap (`linear_to_lora_layers`), and for each its
/// lora_a `(in, rank)`, lora_b `(rank, out)` and, for DoRA, m `(out)`, read and widened.
///
/// Stricter than mlx_lm where mlx_lm would produce a silently wrong model: a key that names
/// no module, a wrapped module whose tensors are missing (mlx_lm keeps their random initial
/// values), an adapter tensor for a module that is not wrapped (mlx_lm refuses that too).
struct LoRAAdapter {
    static let weightsFileName = "adapters.safetensors"

    let config: AdapterConfig
    /// By module path, in the model's module order.
    let modules: [ModuleAdapter]

    static func load(directory: String, layout: ModelLayout) throws -> LoRAAdapter {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { throw FuseError.adapterMissing(path: directory) }
        let config = try AdapterConfig.load(directory: directory)
        let configPath = directory + "/" + AdapterConfig.fileName
        let wrapped = try wrappedModules(config, layout: layout, configPath: configPath)

        let path = directory + "/" + weightsFileName
        guard FileManager.default.fileExists(atPath: path) else {
            throw FuseError.adapterMissing(path: path)
        }
        let file = try SafeTensorsFile(path: path)
        let byPath = Dictionary(uniqueKeysWithValues: wrapped.map { ($0.path, $0) })
        let leaves: Set<String> = config.kind == .dora ? ["lora_a", "lora_b", "m"] : ["lora_a", "lora_b"]
        for t in file.tensors {
            let (module, leaf) = split(t.name)
            guard leaves.contains(leaf) else {
                throw FuseError.badAdapterTensor(
                    file: path, name: t.name,
                    detail: "is not an adapter parameter (expected "
                        + leaves.sorted().joined(separator: ", ") + " of a wrapped module)")
            }
            guard byPath[module] != nil else {
                let exists = layout.modules.contains { $0.path == module }
                throw FuseError.badAdapterTensor(
                    file: path, name: t.name,
                    detail: exists
                        ? "belongs to module '\(module)', which num_layers \(config.numLayers)"
                            + " and the keys of \(AdapterConfig.fileName) do not wrap"
                        : "names module '\(module)', which a \(layout.config.modelType) model "
                            + "of \(layout.config.layerCount) layers does not have")
            }
            guard [.f32, .f16, .bf16].contains(t.dtype) else {
                throw FuseError.badAdapterTensor(
                    file: path, name: t.name,
                    detail: "is \(t.dtype.pythonName); adapter tensors are float32, float16 "
                        + "or bfloat16")
            }
        }
        let modules = try wrapped.map { m in
            try moduleAdapter(m, file: file, path: path, config: config)
        }
        return LoRAAdapter(config: config, modules: modules)
    }

    /// `model.layers.3.self_attn.qkv_proj.lora_a` → (`model.layers.3.self_attn.qkv_proj`, `lora_a`).
    private static func split(_ name: String) -> (String, String) {
        guard let dot = name.lastIndex(of: ".") else { return ("", name) }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    /// mlx_lm's `linear_to_lora_layers`: in each of the last `num_layers` layers, the modules
    /// named by `keys` (relative to the layer) or every Linear; then top-level modules whose
    /// full path is a key.
    static func wrappedModules(
        _ config: AdapterConfig, layout: ModelLayout, configPath: String
    ) throws -> [ModuleSpec] {
        let layers = layout.config.layerCount
        let first = config.numLayers <= 0 || config.numLayers >= layers ? 0 : layers - config.numLayers
        var chosen: Set<String> = []
        var matched: Set<String> = []
        for module in layout.modules {
            for i in first..<layers {
                let prefix = "model.layers.\(i)."
                guard module.path.hasPrefix(prefix) else { continue }
                let key = String(module.path.dropFirst(prefix.count))
                if let keys = config.keys {
                    if keys.contains(key) {
                        chosen.insert(module.path)
                        matched.insert(key)
                    }
                } else if module.kind == .linear {
                    chosen.insert(module.path)
                }
            }
            if let keys = config.keys, keys.contains(module.path) {
                chosen.insert(module.path)
                matched.insert(module.path)
            }
        }
        // A key of a layer module outside the wrapped layers still names a real module.
        let everyKey = Set(
            layout.modules.map { m in
                m.path.replacing(/^model\.layers\.\d+\./, with: "")
            })
        for key in config.keys ?? [] where !matched.contains(key) && !everyKey.contains(key) {
            throw FuseError.badAdapterConfig(
                path: configPath,
                detail: "lora_parameters.keys: '\(key)' names no module of a "
                    + "\(layout.config.modelType) model",
                hint: "the keys of this architecture's layers: "
                    + layout.modules.filter { $0.path.hasPrefix("model.layers.0.") && $0.kind == .linear }
                    .map { String($0.path.dropFirst("model.layers.0.".count)) }.joined(separator: ", "))
        }
        let modules = layout.modules.filter { chosen.contains($0.path) }
        for m in modules where m.kind != .linear || m.shape.count != 2 {
            throw FuseError.unsupported(
                "\(configPath): module '\(m.path)' is "
                    + (m.kind == .embedding ? "an embedding" : m.kind == .norm ? "a norm" : "a stack of experts")
                    + "; phikit fuse supports LoRA and DoRA on Linear layers")
        }
        return modules
    }

    private static func moduleAdapter(
        _ m: ModuleSpec, file: SafeTensorsFile, path: String, config: AdapterConfig
    ) throws -> ModuleAdapter {
        let (outputs, inputs) = (m.shape[0], m.shape[1])
        let r = config.rank
        func tensor(_ leaf: String, _ shape: [Int], _ what: String) throws -> TensorInfo {
            let name = m.path + "." + leaf
            guard let t = file.info(name) else {
                throw FuseError.missingAdapterTensor(file: path, name: name)
            }
            guard t.shape == shape else {
                throw FuseError.badAdapterTensor(
                    file: path, name: name,
                    detail: "has shape \(t.shape), expected \(shape) (\(what))")
            }
            return t
        }
        let a = try tensor("lora_a", [inputs, r], "input size × rank \(r) of adapter_config.json")
        let b = try tensor("lora_b", [r, outputs], "rank \(r) of adapter_config.json × output size")
        let aValues = widened(file, a)
        let bValues = widened(file, b)
        // mlx: `scale * lora_b` with the Python float made a scalar of lora_b's dtype.
        let scale = rounded(Float(config.scale), to: b.dtype)
        var scaledB = [Float](repeating: 0, count: outputs * r)
        for k in 0..<r {
            for o in 0..<outputs {
                scaledB[o * r + k] = rounded(scale * bValues[k * outputs + o], to: b.dtype)
            }
        }
        var magnitude: [Float]?
        var magnitudeDType: DType?
        if config.kind == .dora {
            let t = try tensor("m", [outputs], "DoRA's magnitude: one value per output row")
            magnitude = widened(file, t)
            magnitudeDType = t.dtype
        }
        return ModuleAdapter(
            path: m.path, inputs: inputs, outputs: outputs, rank: r, scaledB: scaledB,
            a: aValues, deltaDType: promote(a.dtype, b.dtype), magnitude: magnitude,
            magnitudeDType: magnitudeDType)
    }

    private static func widened(_ file: SafeTensorsFile, _ t: TensorInfo) -> [Float] {
        var values = [Float](repeating: 0, count: t.elementCount)
        values.withUnsafeMutableBufferPointer { widen(file.data(t), t.dtype, into: $0) }
        return values
    }
}

import CKernels
import Foundation
import PhiFormats
import TestSupport

@testable import PhiEngine

/// Writes the tiny random models of scripts/engine/tiny_models.py (the same generator, so the
/// weights are bit-identical to the ones the golden script gave transformers and mlx), and
/// MLX-quantized copies of any float32 model directory.
enum TinyModels {
    /// r(k, i) in [-1, 1), exact in float32 (tiny_models.py's generator).
    static func uniform(seed: UInt64, tensor k: Int, count: Int) -> [Float] {
        SeededWeights.uniform(seed: seed, tensor: k, count: count)
    }

    /// name → (shape, float32 values) in the order tiny_models.py numbers them (its
    /// `tensor_shapes`: per layer the input norm first, the post-attention norm before the
    /// MLP), with shapes and kinds from the schema.
    static func weights(
        _ config: ModelConfig, seed: UInt64, amplitude: Float
    ) throws -> [(name: String, shape: [Int], values: [Float])] {
        let layout = try ModelLayout(config: config)
        if ["phi", "llama"].contains(config.modelType) {
            return schemaOrderWeights(layout, seed: seed, amplitude: amplitude)
        }
        let perLayer = [
            "input_layernorm", "self_attn.qkv_proj", "self_attn.o_proj",
            "post_attention_layernorm", "mlp.gate_up_proj", "mlp.down_proj",
        ]
        let paths =
            ["model.embed_tokens"]
            + (0..<config.layerCount).flatMap { i in perLayer.map { "model.layers.\(i).\($0)" } }
            + ["model.norm"] + (config.tieWordEmbeddings ? [] : ["lm_head"])
        let ordered = paths.map(layout.module)
        precondition(Set(ordered.map(\.path)) == Set(layout.modules.map(\.path)))
        return ordered.enumerated().map { k, module in
            let r = uniform(seed: seed, tensor: k, count: module.shape.reduce(1, *))
            let values = module.kind == .norm ? r.map { 1 + $0 * 0.25 } : r.map { $0 * amplitude }
            return (module.weightName, module.shape, values)
        }
    }

    /// A phi or llama model's tensors: every one numbered in the schema's (mlx's) order, each
    /// module's weight then its bias (tiny_models.py's `phi_tensor_shapes`,
    /// `llama_tensor_shapes`); biases (phi's) are r × 0.1.
    static func schemaOrderWeights(
        _ layout: ModelLayout, seed: UInt64, amplitude: Float
    ) -> [(name: String, shape: [Int], values: [Float])] {
        let tensors = layout.modules.flatMap { module in
            [(module.weightName, module.shape, module.kind == .norm)]
                + (module.biasName.map { [($0, module.biasShape, false)] } ?? [])
        }
        return tensors.enumerated().map { k, tensor in
            let (name, shape, isNormWeight) = tensor
            let r = uniform(seed: seed, tensor: k, count: shape.reduce(1, *))
            let scale: Float = name.hasSuffix(".bias") ? 0.1 : amplitude
            return (name, shape, isNormWeight ? r.map { 1 + $0 * 0.25 } : r.map { $0 * scale })
        }
    }

    /// A fresh directory with config.json and a model.safetensors of `dtype` (f32 or bf16).
    static func writeFloat(
        config: JSONValue, seed: UInt64, amplitude: Float, dtype: DType = .f32
    ) throws -> TemporaryModel {
        let dir = try TemporaryModel()
        var json = config
        json.set("torch_dtype", .string(dtype.pythonName))
        try dir.write("config.json", json.serialized())
        let parsed = try ModelConfig(data: Array(json.serialized().utf8), source: "config.json")
        let tensors = try weights(parsed, seed: seed, amplitude: amplitude).map {
            Tensor(name: $0.name, shape: $0.shape, dtype: dtype, bytes: encode($0.values, dtype))
        }
        try writeSafetensors(tensors, to: dir.file("model.safetensors"))
        return dir
    }

    /// What `mlx_lm.convert -q` makes of the float32 model in `source`, given the
    /// `quantization` object it recorded: Linear/Embedding weights whose width divides their
    /// group are quantized (per-layer entries first), everything else stays float32.
    static func writeQuantized(
        from source: String, quantization: JSONValue, config: JSONValue? = nil
    ) throws -> TemporaryModel {
        let dir = try TemporaryModel()
        var json =
            try config
            ?? JSONValue(
                parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: source + "/config.json"))))
        json.set("quantization", quantization)
        json.set("quantization_config", quantization)
        try dir.write("config.json", json.serialized())
        let settings = try JSONDecoder().decode(
            QuantizationConfig.self, from: Data(quantization.serialized().utf8))
        let files = try ModelWeights(directory: source)
        var tensors: [Tensor] = []
        for name in files.tensorNames {
            let (file, info) = files.tensor(name)!
            precondition(info.dtype == .f32, "quantize from a float32 model")
            var values = [Float](repeating: 0, count: info.elementCount)
            values.withUnsafeMutableBytes { $0.copyMemory(from: file.data(info)) }
            let module = String(name.dropLast(".weight".count))
            if !name.contains("norm"), info.shape.count == 2,
                case .quantized(let group, let bits, let mode) = settings.layer(module),
                info.shape[1] % group == 0, mode != "affine"
            {
                tensors += try microscaled(
                    name, module, values, shape: info.shape,
                    QuantizationScheme(mode: mode, bits: bits, groupSize: group))
            } else if !name.contains("norm"), info.shape.count == 2,
                case .quantized(let group, let bits, _) = settings.layer(module),
                info.shape[1] % group == 0
            {
                let q = try AffineQuantization(bits: bits, groupSize: group).quantize(
                    values, rows: info.shape[0], cols: info.shape[1], outDType: .f32)
                tensors.append(
                    Tensor(
                        name: name, shape: q.weightShape, dtype: .u32,
                        bytes: q.weight.withUnsafeBytes { Array($0) }))
                tensors.append(
                    Tensor(
                        name: module + ".scales", shape: q.scalesShape, dtype: .f32, bytes: q.scales
                    ))
                tensors.append(
                    Tensor(
                        name: module + ".biases", shape: q.scalesShape, dtype: .f32, bytes: q.biases
                    ))
            } else {
                tensors.append(
                    Tensor(name: name, shape: info.shape, dtype: .f32, bytes: encode(values, .f32)))
            }
        }
        try writeSafetensors(
            tensors.sorted { $0.name < $1.name }, to: dir.file("model.safetensors"))
        return dir
    }

    /// An mxfp4/nvfp4/mxfp8 layer from float32 values: packed codes and uint8 scales.
    static func microscaled(
        _ name: String, _ module: String, _ values: [Float], shape: [Int],
        _ scheme: QuantizationScheme
    ) throws -> [Tensor] {
        let (rows, cols) = (shape[0], shape[1])
        var packed = [UInt32](repeating: 0, count: rows * scheme.packedColumns(cols))
        var scales = [UInt8](repeating: 0, count: rows * scheme.groupsPerRow(cols))
        try values.withUnsafeBufferPointer { w in
            try packed.withUnsafeMutableBufferPointer { q in
                try scales.withUnsafeMutableBytes { s in
                    try scheme.quantize(
                        w, rows: rows, cols: cols, dtype: .f32, weight: q, scales: s,
                        biases: nil, threads: 1)
                }
            }
        }
        let (wShape, sShape) = scheme.quantizedShapes(for: shape)
        return [
            Tensor(
                name: name, shape: wShape, dtype: .u32,
                bytes: packed.withUnsafeBytes { Array($0) }),
            Tensor(name: module + ".scales", shape: sShape, dtype: .u8, bytes: scales),
        ]
    }

    /// SHA-256 of each tensor's bytes, as the golden script hashes mlx_lm.convert's output.
    static func tensorHashes(_ directory: String) throws -> [String: String] {
        let files = try ModelWeights(directory: directory)
        var out: [String: String] = [:]
        for name in files.tensorNames {
            let (file, info) = files.tensor(name)!
            out[name] = SHA256Hasher.hex(of: file.data(info))
        }
        return out
    }

    struct Tensor {
        let name: String
        let shape: [Int]
        let dtype: DType
        let bytes: [UInt8]
    }

    static func writeSafetensors(_ tensors: [Tensor], to path: String) throws {
        let writer = try SafeTensorsWriter(
            path: path,
            tensors: tensors.map { TensorSpec(name: $0.name, dtype: $0.dtype, shape: $0.shape) },
            metadata: ["format": "pt"])
        for t in tensors { try t.bytes.withUnsafeBytes { try writer.write($0) } }
        try writer.finish()
    }

    static func encode(_ values: [Float], _ dtype: DType) -> [UInt8] {
        switch dtype {
        case .bf16:
            var halves = [UInt16](repeating: 0, count: values.count)
            pk_f32_to_bf16(&halves, values, values.count)
            return halves.withUnsafeBytes { Array($0) }
        default:
            return values.withUnsafeBytes { Array($0) }
        }
    }
}

/// A temporary model directory, removed when dropped.
final class TemporaryModel {
    let path: String

    init() throws {
        path =
            FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-engine-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func write(_ name: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: file(name)))
    }
}

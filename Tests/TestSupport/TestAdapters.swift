import Foundation

/// Small mlx-lm adapter folders (adapter_config.json + adapters.safetensors, as mlx_lm.lora
/// writes them) with pseudo-random float32 factors, for the tests of `--adapter-path`,
/// `serve --adapter` and `fuse` on the bundled stories-260k.
public enum TestAdapters {
    /// A LoRA of `rank`, scale 4, on `key` of `layers`, of (`inputs`, `outputs`); by default
    /// stories-260k's last qkv_proj (hidden 64, qkv rows 128). `aShape` overrides lora_a's
    /// shape (a broken adapter); `seed` makes another adapter of the same shape.
    public static func write(
        to dir: URL, key: String = "self_attn.qkv_proj", layers: Range<Int> = 4..<5,
        inputs: Int = 64, outputs: Int = 128, rank: Int = 2, aShape: [Int]? = nil,
        seed: UInt64 = 42
    ) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config: [String: Any] = [
            "fine_tune_type": "lora", "num_layers": layers.count,
            "lora_parameters": ["rank": rank, "scale": 4.0, "keys": [key]],
        ]
        try JSONSerialization.data(withJSONObject: config).write(
            to: dir.appendingPathComponent("adapter_config.json"))
        var state = seed
        func values(_ count: Int) -> [Float] {
            (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: state >> 11) % 2001 - 1000) / 4000
            }
        }
        let tensors: [(String, [Int])] = layers.flatMap { l in
            let prefix = "model.layers.\(l).\(key)."
            return [(prefix + "lora_a", aShape ?? [inputs, rank]), (prefix + "lora_b", [rank, outputs])]
        }
        var header: [String: Any] = [:]
        var data = Data()
        for (name, shape) in tensors {
            let floats = values(shape.reduce(1, *))
            header[name] = [
                "dtype": "F32", "shape": shape, "data_offsets": [data.count, data.count + floats.count * 4],
            ]
            floats.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
        var file = Data()
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(json)
        file.append(data)
        try file.write(to: dir.appendingPathComponent("adapters.safetensors"))
    }
}

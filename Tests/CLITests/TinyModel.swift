import Foundation

/// Writes small model directories for the CLI tests. The safetensors bytes are laid out by
/// hand (8-byte little-endian header length, JSON header, data) so these tests check phikit's
/// reader against the format itself, not against phikit's own writer.
enum TinyModel {
    struct Tensor: Sendable {
        var name: String
        var dtype: String
        var shape: [Int]
        var elementSize: Int { dtype == "U32" || dtype == "F32" ? 4 : dtype == "U8" ? 1 : 2 }
        var byteCount: Int { shape.reduce(1, *) * elementSize }
    }

    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A safetensors file whose data is zeros. With `sparse`, the data section is a hole made
    /// by ftruncate, so a 7 GB file of real shapes costs no disk.
    static func writeSafetensors(
        _ tensors: [Tensor], to url: URL, metadata: [String: String]? = nil,
        sparse: Bool = false
    ) throws {
        var header: [String: Any] = [:]
        var offset = 0
        for t in tensors {
            header[t.name] = [
                "dtype": t.dtype, "shape": t.shape, "data_offsets": [offset, offset + t.byteCount],
            ]
            offset += t.byteCount
        }
        if let metadata { header["__metadata__"] = metadata }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
        var bytes = Data()
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { bytes.append(contentsOf: $0) }
        bytes.append(json)
        if !sparse { bytes.append(Data(count: offset)) }
        try bytes.write(to: url)
        if sparse {
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(8 + json.count + offset))
            try handle.close()
        }
    }

    static func writeJSON(_ object: [String: Any], to url: URL) throws {
        try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
            .write(to: url)
    }

    /// A 1-layer Phi-3-shaped model, hidden 8: 824 parameters, 1,648 bytes of bf16.
    static var phi3Config: [String: Any] {
        [
            "model_type": "phi3", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 2, "vocab_size": 10,
            "max_position_embeddings": 64, "tie_word_embeddings": false, "torch_dtype": "bfloat16",
            "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
        ]
    }

    static let phi3Tensors: [Tensor] = [
        .init(name: "model.embed_tokens.weight", dtype: "BF16", shape: [10, 8]),
        .init(name: "model.layers.0.input_layernorm.weight", dtype: "BF16", shape: [8]),
        .init(name: "model.layers.0.self_attn.qkv_proj.weight", dtype: "BF16", shape: [24, 8]),
        .init(name: "model.layers.0.self_attn.o_proj.weight", dtype: "BF16", shape: [8, 8]),
        .init(name: "model.layers.0.post_attention_layernorm.weight", dtype: "BF16", shape: [8]),
        .init(name: "model.layers.0.mlp.gate_up_proj.weight", dtype: "BF16", shape: [32, 8]),
        .init(name: "model.layers.0.mlp.down_proj.weight", dtype: "BF16", shape: [8, 16]),
        .init(name: "model.norm.weight", dtype: "BF16", shape: [8]),
        .init(name: "lm_head.weight", dtype: "BF16", shape: [10, 8]),
    ]

    static func phi3Directory() throws -> URL {
        let dir = try temporaryDirectory()
        try writeJSON(phi3Config, to: dir.appendingPathComponent("config.json"))
        try writeSafetensors(
            phi3Tensors, to: dir.appendingPathComponent("model.safetensors"),
            metadata: ["format": "pt"])
        return dir
    }

    /// One 4-bit, group-64 quantized Linear (4 × 64: packed [4, 8] uint32, scales and biases
    /// [4, 1]) and a norm of 64: 256 + 64 = 320 parameters in 272 bytes.
    static func quantizedDirectory(configSaysBits: Bool = true) throws -> URL {
        let dir = try temporaryDirectory()
        var config = phi3Config
        config["hidden_size"] = 64
        if configSaysBits {
            config["quantization"] = ["group_size": 64, "bits": 4, "mode": "affine"]
        }
        try writeJSON(config, to: dir.appendingPathComponent("config.json"))
        try writeSafetensors(
            [
                .init(name: "model.layers.0.mlp.down_proj.weight", dtype: "U32", shape: [4, 8]),
                .init(name: "model.layers.0.mlp.down_proj.scales", dtype: "BF16", shape: [4, 1]),
                .init(name: "model.layers.0.mlp.down_proj.biases", dtype: "BF16", shape: [4, 1]),
                .init(name: "model.norm.weight", dtype: "BF16", shape: [64]),
            ], to: dir.appendingPathComponent("model.safetensors"), metadata: ["format": "mlx"])
        return dir
    }
}

extension TinyModel {
    /// A Phi-3-shaped bf16 model of 150 M parameters (300 MB, sparse: no disk), big enough that
    /// converting it takes a noticeable fraction of a second — long enough to interrupt.
    static func mediumPhi3Directory() throws -> URL {
        let (hidden, intermediate, layers, vocab) = (1024, 2048, 8, 32000)
        var config = phi3Config
        config["hidden_size"] = hidden
        config["intermediate_size"] = intermediate
        config["num_hidden_layers"] = layers
        config["num_attention_heads"] = 8
        config["num_key_value_heads"] = 8
        config["vocab_size"] = vocab
        let tensors = mediumTensors(
            hidden: hidden, intermediate: intermediate, layers: layers, vocab: vocab)
        let dir = try temporaryDirectory()
        try writeJSON(config, to: dir.appendingPathComponent("config.json"))
        try writeSafetensors(
            tensors, to: dir.appendingPathComponent("model.safetensors"),
            metadata: ["format": "pt"], sparse: true)
        return dir
    }

    /// Every tensor of a Phi-3 model of these sizes (bf16, untied).
    static func mediumTensors(hidden: Int, intermediate: Int, layers: Int, vocab: Int)
        -> [Tensor]
    {
        var tensors: [Tensor] = [
            .init(name: "model.embed_tokens.weight", dtype: "BF16", shape: [vocab, hidden])
        ]
        for i in 0..<layers {
            let p = "model.layers.\(i)."
            tensors += [
                .init(name: p + "input_layernorm.weight", dtype: "BF16", shape: [hidden]),
                .init(
                    name: p + "self_attn.qkv_proj.weight", dtype: "BF16",
                    shape: [3 * hidden, hidden]),
                .init(name: p + "self_attn.o_proj.weight", dtype: "BF16", shape: [hidden, hidden]),
                .init(name: p + "post_attention_layernorm.weight", dtype: "BF16", shape: [hidden]),
                .init(
                    name: p + "mlp.gate_up_proj.weight", dtype: "BF16",
                    shape: [2 * intermediate, hidden]),
                .init(
                    name: p + "mlp.down_proj.weight", dtype: "BF16", shape: [hidden, intermediate]),
            ]
        }
        return tensors + [
            .init(name: "model.norm.weight", dtype: "BF16", shape: [hidden]),
            .init(name: "lm_head.weight", dtype: "BF16", shape: [vocab, hidden]),
        ]
    }
}

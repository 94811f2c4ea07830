import Foundation
import TestSupport

/// Tiny chat models: the real Phi-3.5 and Phi-4-mini tokenizers and chat templates (from the
/// shared fixtures) on one-layer models of random bf16 weights. Greedy text from random
/// weights is arbitrary but deterministic, which is all the chat tests compare.
enum ChatTinyModel: String, CaseIterable, Sendable, CustomStringConvertible {
    /// MHA, untied, LongRoPE with the original 4096 positions (never crossed here).
    case phi35
    /// GQA (2 heads, 1 KV head), partial_rotary_factor 0.75, tied embeddings, vocab 200,064.
    case phi4mini
    /// Phi-3.5-shaped with original_max_position_embeddings 48: a few turns cross it.
    case phi35LongRope

    var description: String { rawValue }

    /// In Tests/Fixtures (`TestPaths`); a missing one fails the test that builds the model.
    private var tokenizerDirectory: URL {
        get throws {
            switch self {
            case .phi35, .phi35LongRope:
                try TestPaths.sharedURL("microsoft--Phi-3.5-mini-instruct")
            case .phi4mini: try TestPaths.sharedURL("_derived/microsoft--Phi-4-mini-instruct")
            }
        }
    }

    private var vocab: Int { self == .phi4mini ? 200_064 : 32_064 }
    private var hidden: Int { 16 }
    private var heads: Int { 2 }
    private var kvHeads: Int { self == .phi4mini ? 1 : 2 }
    private var intermediate: Int { 32 }
    private var headDim: Int { hidden / heads }
    private var ropeHalf: Int { self == .phi4mini ? 3 : headDim / 2 }  // rotary dim / 2

    private var config: [String: Any] {
        var config: [String: Any] = [
            "model_type": "phi3", "hidden_size": hidden, "intermediate_size": intermediate,
            "num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": kvHeads,
            "vocab_size": vocab, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "torch_dtype": "bfloat16", "tie_word_embeddings": self == .phi4mini,
            "bos_token_id": 1,
        ]
        let original = self == .phi35LongRope ? 48 : 4096
        config["original_max_position_embeddings"] = original
        config["max_position_embeddings"] = original * 32
        let short: [Double] = (0..<ropeHalf).map { 1.0 + 0.1 * Double($0) }
        let long: [Double] = (0..<ropeHalf).map { 1.5 + 2.0 * Double($0) }
        let scaling: [String: Any] = ["type": "longrope", "short_factor": short, "long_factor": long]
        config["rope_scaling"] = scaling
        switch self {
        case .phi35, .phi35LongRope:
            config["eos_token_id"] = 32000
        case .phi4mini:
            config["partial_rotary_factor"] = 0.75
            config["eos_token_id"] = 199_999
        }
        return config
    }

    private var tensors: [(name: String, shape: [Int], norm: Bool)] {
        let qkv = (heads + 2 * kvHeads) * headDim
        var list: [(String, [Int], Bool)] = [
            ("model.embed_tokens.weight", [vocab, hidden], false),
            ("model.layers.0.input_layernorm.weight", [hidden], true),
            ("model.layers.0.self_attn.qkv_proj.weight", [qkv, hidden], false),
            ("model.layers.0.self_attn.o_proj.weight", [hidden, heads * headDim], false),
            ("model.layers.0.post_attention_layernorm.weight", [hidden], true),
            ("model.layers.0.mlp.gate_up_proj.weight", [2 * intermediate, hidden], false),
            ("model.layers.0.mlp.down_proj.weight", [hidden, intermediate], false),
            ("model.norm.weight", [hidden], true),
        ]
        if self != .phi4mini { list.append(("lm_head.weight", [vocab, hidden], false)) }
        return list
    }

    /// Writes the model into a new temporary directory.
    func directory() throws -> URL {
        let tokenizerDirectory = try tokenizerDirectory
        let dir = try TinyModel.temporaryDirectory()
        try TinyModel.writeJSON(config, to: dir.appendingPathComponent("config.json"))
        for name in ["tokenizer.json", "tokenizer_config.json"] {
            try FileManager.default.copyItem(
                at: tokenizerDirectory.appendingPathComponent(name),
                to: dir.appendingPathComponent(name))
        }
        if self != .phi4mini {
            try FileManager.default.copyItem(
                at: tokenizerDirectory.appendingPathComponent("generation_config.json"),
                to: dir.appendingPathComponent("generation_config.json"))
        }
        try writeWeights(to: dir.appendingPathComponent("model.safetensors"))
        return dir
    }

    /// bf16 weights from a fixed-seed generator: norms 1, matrices uniform in ±0.5.
    private func writeWeights(to url: URL) throws {
        var header: [String: Any] = ["__metadata__": ["format": "pt"]]
        var offset = 0
        for t in tensors {
            let bytes = t.shape.reduce(1, *) * 2
            header[t.name] = ["dtype": "BF16", "shape": t.shape, "data_offsets": [offset, offset + bytes]]
            offset += bytes
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
        var data = Data(capacity: 8 + json.count + offset)
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(json)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for t in tensors {
            let count = t.shape.reduce(1, *)
            var values = [UInt16](repeating: 0, count: count)
            for i in 0..<count {
                let value: Float
                if t.norm {
                    value = 1
                } else {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    value = (Float(state >> 40) / Float(1 << 24) - 0.5)
                }
                values[i] = UInt16(value.bitPattern >> 16).littleEndian
            }
            values.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        try data.write(to: url)
    }
}

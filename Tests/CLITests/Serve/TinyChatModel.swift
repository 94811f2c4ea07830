import Foundation
import TestSupport

/// Random-weight models of both Phi shapes with the real tokenizers and chat templates from
/// Tests/Fixtures, small enough to write in a test (hidden 32, 2 layers): Phi-3.5-mini's
/// (MHA, untied, 32064 vocabulary) and Phi-4-mini's (GQA 4:2, partial rotary 0.75, tied
/// embeddings, 200064 vocabulary, tools in the system message).
enum TinyChatModel: String, CaseIterable, Sendable {
    case phi35 = "microsoft--Phi-3.5-mini-instruct"
    case phi4mini = "microsoft--Phi-4-mini-instruct"

    /// Where the tokenizer files are in Tests/Fixtures (Phi-4-mini's tokenizer.json is a
    /// reconstruction); a missing fixture fails the test.
    func tokenizerDirectory() throws -> URL {
        try TestPaths.sharedURL(self == .phi35 ? rawValue : "_derived/" + rawValue)
    }

    private var config: [String: Any] {
        var config: [String: Any] = [
            "model_type": "phi3", "architectures": ["Phi3ForCausalLM"], "hidden_size": 32,
            "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
            "max_position_embeddings": 4096, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "torch_dtype": "bfloat16",
        ]
        switch self {
        case .phi35:
            config["num_key_value_heads"] = 4
            config["vocab_size"] = 32064
            config["tie_word_embeddings"] = false
            config["eos_token_id"] = 32000
        case .phi4mini:
            config["num_key_value_heads"] = 2
            config["vocab_size"] = 200064
            config["tie_word_embeddings"] = true
            config["partial_rotary_factor"] = 0.75
            config["eos_token_id"] = 199999
        }
        return config
    }

    private var endTokens: [Int] { self == .phi35 ? [32007, 32001, 32000] : [200020, 199999] }

    /// Writes the model into a fresh directory.
    func write(seed: UInt64 = 7) throws -> URL {
        let dir = try TinyModel.temporaryDirectory()
        let config = self.config
        try TinyModel.writeJSON(config, to: dir.appendingPathComponent("config.json"))
        try TinyModel.writeJSON(
            ["eos_token_id": endTokens], to: dir.appendingPathComponent("generation_config.json"))
        for name in ["tokenizer.json", "tokenizer_config.json"] {
            try FileManager.default.copyItem(
                at: try tokenizerDirectory().appendingPathComponent(name),
                to: dir.appendingPathComponent(name))
        }
        let (hidden, intermediate) = (32, 64)
        let vocab = config["vocab_size"] as! Int
        let heads = config["num_attention_heads"] as! Int
        let kvHeads = config["num_key_value_heads"] as! Int
        let headDim = hidden / heads
        var tensors: [(String, [Int])] = [("model.embed_tokens.weight", [vocab, hidden])]
        for i in 0..<2 {
            let p = "model.layers.\(i)."
            tensors += [
                (p + "input_layernorm.weight", [hidden]),
                (p + "self_attn.qkv_proj.weight", [(heads + 2 * kvHeads) * headDim, hidden]),
                (p + "self_attn.o_proj.weight", [hidden, hidden]),
                (p + "post_attention_layernorm.weight", [hidden]),
                (p + "mlp.gate_up_proj.weight", [2 * intermediate, hidden]),
                (p + "mlp.down_proj.weight", [hidden, intermediate]),
            ]
        }
        tensors.append(("model.norm.weight", [hidden]))
        if self == .phi35 { tensors.append(("lm_head.weight", [vocab, hidden])) }
        try Self.writeRandomBF16(tensors, seed: seed, to: dir.appendingPathComponent("model.safetensors"))
        return dir
    }

    /// bf16 tensors of uniform values in [-0.5, 0.5) (norms around 1), from splitmix64.
    private static func writeRandomBF16(_ tensors: [(String, [Int])], seed: UInt64, to url: URL)
        throws
    {
        var header: [String: Any] = ["__metadata__": ["format": "pt"]]
        var offset = 0
        for (name, shape) in tensors {
            let bytes = shape.reduce(1, *) * 2
            header[name] = ["dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + bytes]]
            offset += bytes
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
        var data = Data(capacity: 8 + json.count + offset)
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { data.append(contentsOf: $0) }
        data.append(json)
        var state = seed
        for (name, shape) in tensors {
            let count = shape.reduce(1, *)
            var values = [UInt16](repeating: 0, count: count)
            for i in 0..<count {
                state &+= 0x9E37_79B9_7F4A_7C15
                var z = state
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                let uniform = Float(z >> 40) * 0x1p-24 - 0.5
                let value: Float = name.contains("norm") ? 1 + uniform * 0.5 : uniform
                values[i] = UInt16(value.bitPattern >> 16)
            }
            values.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        try data.write(to: url)
    }
}

extension TinyChatModel {
    /// A Phi-3-shaped model of 150 M zero parameters (sparse file: no disk) with the Phi-3.5
    /// tokenizer: every logit is 0, so it never ends on its own and each token takes a
    /// noticeable time — long enough to hang up or fill the queue in the middle of an answer.
    static func slowDirectory() throws -> URL {
        let dir = try TinyModel.temporaryDirectory()
        var config = TinyModel.phi3Config
        config["hidden_size"] = 1024
        config["intermediate_size"] = 2048
        config["num_hidden_layers"] = 8
        config["num_attention_heads"] = 8
        config["num_key_value_heads"] = 8
        config["vocab_size"] = 32064
        config["max_position_embeddings"] = 4096
        let vocab = 32064
        let tensors = TinyModel.mediumTensors(
            hidden: 1024, intermediate: 2048, layers: 8, vocab: vocab)
        try TinyModel.writeJSON(config, to: dir.appendingPathComponent("config.json"))
        try TinyModel.writeSafetensors(
            tensors, to: dir.appendingPathComponent("model.safetensors"),
            metadata: ["format": "pt"], sparse: true)
        for name in ["tokenizer.json", "tokenizer_config.json"] {
            try FileManager.default.copyItem(
                at: try TinyChatModel.phi35.tokenizerDirectory().appendingPathComponent(name),
                to: dir.appendingPathComponent(name))
        }
        return dir
    }
}

extension TinyChatModel {
    /// A Phi-4-mini-shaped model whose greedy answer to any chat is `script`: one layer whose
    /// weights are all zero (so it adds nothing), and embeddings that make it a lookup table —
    /// each token of the script (and `<|assistant|>`, where answers start) gets its own
    /// dimension, and the output row of the token that follows it reads that dimension. The
    /// script's tokens must all differ; it ends with `<|end|>`. Real engine, real tokenizer,
    /// real template: only the weights are chosen, so tool calls can be tested end to end.
    static func scripted(_ script: String) throws -> URL {
        let dir = try TinyModel.temporaryDirectory()
        for name in ["tokenizer.json", "tokenizer_config.json"] {
            try FileManager.default.copyItem(
                at: try phi4mini.tokenizerDirectory().appendingPathComponent(name),
                to: dir.appendingPathComponent(name))
        }
        let hidden = 64
        let vocab = 200064
        var config = phi4mini.config
        config["hidden_size"] = hidden
        config["num_hidden_layers"] = 1
        config["tie_word_embeddings"] = false
        try TinyModel.writeJSON(config, to: dir.appendingPathComponent("config.json"))
        try TinyModel.writeJSON(
            ["eos_token_id": phi4mini.endTokens],
            to: dir.appendingPathComponent("generation_config.json"))
        let encoded = try Phikit.run(["tokenize", dir.path, script, "--no-special-tokens"])
        let ids = [200019] + encoded.stdout.split(separator: " ").compactMap {
            Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
        } + [200020]
        precondition(Set(ids).count == ids.count && ids.count <= hidden, "script tokens repeat")

        let p = "model.layers.0."
        let tensors: [TinyModel.Tensor] = [
            .init(name: "model.embed_tokens.weight", dtype: "BF16", shape: [vocab, hidden]),
            .init(name: p + "input_layernorm.weight", dtype: "BF16", shape: [hidden]),
            .init(name: p + "self_attn.qkv_proj.weight", dtype: "BF16", shape: [128, hidden]),
            .init(name: p + "self_attn.o_proj.weight", dtype: "BF16", shape: [hidden, hidden]),
            .init(name: p + "post_attention_layernorm.weight", dtype: "BF16", shape: [hidden]),
            .init(name: p + "mlp.gate_up_proj.weight", dtype: "BF16", shape: [128, hidden]),
            .init(name: p + "mlp.down_proj.weight", dtype: "BF16", shape: [hidden, 64]),
            .init(name: "model.norm.weight", dtype: "BF16", shape: [hidden]),
            .init(name: "lm_head.weight", dtype: "BF16", shape: [vocab, hidden]),
        ]
        let file = dir.appendingPathComponent("model.safetensors")
        try TinyModel.writeSafetensors(tensors, to: file, metadata: ["format": "pt"], sparse: true)
        // Where each tensor's data starts: after the 8-byte length and the JSON header, in
        // the order written (writeSafetensors lays them out in array order).
        let data = try FileHandle(forReadingFrom: file)
        let length = try data.read(upToCount: 8)!.withUnsafeBytes { $0.load(as: UInt64.self) }
        try data.close()
        var start: [String: Int] = [:]
        var offset = 8 + Int(length)
        for t in tensors {
            start[t.name] = offset
            offset += t.byteCount
        }
        let handle = try FileHandle(forWritingTo: file)
        func put(_ tensor: String, _ index: Int, _ bf16: UInt16) throws {
            try handle.seek(toOffset: UInt64(start[tensor]! + 2 * index))
            try handle.write(contentsOf: withUnsafeBytes(of: bf16.littleEndian) { Data($0) })
        }
        let one: UInt16 = 0x3F80
        let four: UInt16 = 0x4080
        for name in [p + "input_layernorm.weight", p + "post_attention_layernorm.weight", "model.norm.weight"] {
            for i in 0..<hidden { try put(name, i, one) }
        }
        for (k, id) in ids.enumerated() {
            try put("model.embed_tokens.weight", id * hidden + k, one)
            if k + 1 < ids.count { try put("lm_head.weight", ids[k + 1] * hidden + k, four) }
        }
        try handle.close()
        return dir
    }

    static let toolScript =
        #"Let me check.<|tool_call|>{"name":"get_weather","arguments":{"city": "Paris"}}<|/tool_call|>"#
}

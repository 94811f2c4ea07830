import Foundation
import Testing

@testable import PhiFormats

/// `model_type: phi` (Phi-1, 1.5, 2): its config fields and defaults, its modules in mlx's
/// order with their biases, and the validation only phi applies.
@Suite struct PhiSchemaTests {
    /// microsoft/phi-2's config.json as transformers 4.37 wrote it (written from knowledge:
    /// the Hub is not reachable here).
    static let phi2 = """
        {"_name_or_path": "microsoft/phi-2", "architectures": ["PhiForCausalLM"],
         "attention_dropout": 0.0, "bos_token_id": 50256, "embd_pdrop": 0.0,
         "eos_token_id": 50256, "hidden_act": "gelu_new", "hidden_size": 2560,
         "initializer_range": 0.02, "intermediate_size": 10240, "layer_norm_eps": 1e-05,
         "max_position_embeddings": 2048, "model_type": "phi", "num_attention_heads": 32,
         "num_hidden_layers": 32, "num_key_value_heads": 32, "partial_rotary_factor": 0.4,
         "qk_layernorm": false, "resid_pdrop": 0.1, "rope_scaling": null, "rope_theta": 10000.0,
         "tie_word_embeddings": false, "torch_dtype": "float16", "transformers_version": "4.37.0",
         "use_cache": true, "vocab_size": 51200}
        """

    static func config(_ json: String, edit: (inout [String: Any]) -> Void = { _ in }) throws
        -> ModelConfig
    {
        var object =
            try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
        edit(&object)
        let data = try JSONSerialization.data(withJSONObject: object)
        return try ModelConfig(data: [UInt8](data), source: "config.json")
    }

    @Test func phi2ConfigAndModules() throws {
        let config = try Self.config(Self.phi2)
        #expect(config.modelType == "phi" && config.fields(PhiSchema.Fields.self).layerNormEps == 1e-5)
        #expect(config.partialRotaryFactor == 0.4 && config.ropeDim == 32)
        #expect(config.hiddenAct == "gelu_new" && !config.fields(PhiSchema.Fields.self).qkLayerNorm)
        let layout = try ModelLayout(config: config)
        #expect(layout.modules.count == 1 + 32 * 7 + 2)
        #expect(layout["model.embed_tokens"]?.shape == [51200, 2560])
        #expect(layout["model.layers.31.self_attn.dense"]?.shape == [2560, 2560])
        #expect(layout["model.layers.0.mlp.fc1"]?.shape == [10240, 2560])
        #expect(layout["model.layers.0.mlp.fc2"]?.shape == [2560, 10240])
        #expect(layout["lm_head"]?.hasBias == true)
        #expect(layout.modules.filter { !$0.hasBias }.map(\.path) == ["model.embed_tokens"])
    }

    @Test("mlx order: q, k, v, dense, (q/k layernorm), input_layernorm, fc1, fc2")
    func mlxOrder() throws {
        let config = try Self.config(Self.phi2) {
            $0["num_hidden_layers"] = 1
            $0["qk_layernorm"] = true
        }
        let layout = try ModelLayout(config: config)
        let p = "model.layers.0."
        #expect(
            layout.modules.map(\.path) == [
                "model.embed_tokens", p + "self_attn.q_proj", p + "self_attn.k_proj",
                p + "self_attn.v_proj", p + "self_attn.dense", p + "self_attn.q_layernorm",
                p + "self_attn.k_layernorm", p + "input_layernorm", p + "mlp.fc1", p + "mlp.fc2",
                "model.final_layernorm", "lm_head",
            ])
        #expect(layout.module(p + "self_attn.q_layernorm").shape == [80])  // head_dim
        #expect(
            layout.module(p + "input_layernorm").tensorNames(quantized: false) == [
                p + "input_layernorm.weight", p + "input_layernorm.bias",
            ])
        #expect(
            layout.module(p + "mlp.fc1").tensorNames(quantized: true).map {
                $0.split(separator: ".").last!
            } == ["weight", "scales", "biases", "bias"])
        let check = layout.check(tensorNames: layout.modules.map(\.weightName))
        #expect(check.missing.count == layout.modules.count - 1)  // every bias
    }

    @Test("absent keys take transformers' PhiConfig defaults, not phi3's")
    func defaults() throws {
        let config = try Self.config(Self.phi2) {
            for key in [
                "partial_rotary_factor", "max_position_embeddings", "layer_norm_eps",
                "qk_layernorm", "hidden_act",
            ] { $0[key] = nil }
        }
        #expect(config.partialRotaryFactor == 0.5)
        #expect(config.maxPositionEmbeddings == 2048)
        #expect(config.fields(PhiSchema.Fields.self) == PhiSchema.Fields() && config.hiddenAct == nil)
    }

    /// (field, its JSON value, words of the error).
    @Test("phi's own checks name the field", arguments: [
        ("hidden_act", #""silu""#, "'silu' is not supported for phi"),
        ("tie_word_embeddings", "true", "must be false for phi"),
        ("layer_norm_eps", "0", "must be positive"),
        ("rope_scaling", #"{"type": "linear", "factor": 2.0}"#, "not supported for phi"),
    ])
    func validation(_ field: String, _ json: String, _ words: String) throws {
        let value = try JSONSerialization.jsonObject(
            with: Data(json.utf8), options: .fragmentsAllowed)
        do {
            _ = try Self.config(Self.phi2) { $0[field] = value }
            Issue.record("accepted \(field): \(value)")
        } catch let error as ConfigError {
            #expect(error.message.contains(words), "\(error.message)")
            #expect(error.message.contains(field))
            #expect(error.exitCode == .dataError)
        }
    }
}

import Foundation
import Testing

@testable import PhiFormats

/// The phimoe schema: mlx-lm's module tree and order, the stacked experts' shapes, the Hugging
/// Face per-expert layout read as the stack, and the expert fields of config.json.
@Suite struct PhiMoESchemaTests {
    /// Phi-3.5-MoE-instruct's config.json (sizes as published by Microsoft; no fixture of it
    /// is in ../shared/fixtures).
    static let phi35MoE = """
        {"model_type": "phimoe", "hidden_size": 4096, "intermediate_size": 6400,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
         "vocab_size": 32064, "num_local_experts": 16, "num_experts_per_tok": 2,
         "router_jitter_noise": 0.01, "attention_bias": true, "lm_head_bias": true,
         "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
         "rms_norm_eps": 1e-05, "sliding_window": 131072, "tie_word_embeddings": false}
        """

    static func config(_ text: String = phi35MoE) throws -> ModelConfig {
        try ModelConfig(data: Array(text.utf8), source: "config.json")
    }

    @Test func phi35MoEModulesInMlxOrder() throws {
        let layout = try ModelLayout(config: try Self.config())
        #expect(layout.modules.count == 1 + 32 * 10 + 2)
        #expect(
            layout.modules[1...10].map { $0.path.replacingOccurrences(of: "model.layers.0.", with: "") }
                == [
                    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                    "block_sparse_moe.gate", "block_sparse_moe.switch_mlp.gate_proj",
                    "block_sparse_moe.switch_mlp.up_proj", "block_sparse_moe.switch_mlp.down_proj",
                    "input_layernorm", "post_attention_layernorm",
                ])
        let up = layout.module("model.layers.3.block_sparse_moe.switch_mlp.up_proj")
        #expect(up.shape == [16, 6400, 4096] && up.isQuantizable && !up.hasBias)
        #expect(layout.module("model.layers.3.block_sparse_moe.switch_mlp.down_proj").shape
            == [16, 4096, 6400])
        #expect(layout.module("model.layers.3.self_attn.k_proj").biasShape == [1024])
        #expect(layout.module("model.norm").tensorNames(quantized: false).last == "model.norm.bias")
        #expect(layout.module("lm_head").hasBias)
        let parameters = layout.modules.reduce(0) {
            $0 + $1.shape.reduce(1, *) + ($1.hasBias ? $1.biasShape.reduce(1, *) : 0)
        }
        #expect(parameters == 41_873_153_344)  // the 41.9B of the model card
    }

    @Test("the Hugging Face per-expert tensors are accepted as the stack")
    func perExpertLayout() throws {
        var config = try Self.config()
        config.layerCount = 1
        let layout = try ModelLayout(config: config)
        let hfNames = layout.modules.flatMap { module -> [String] in
            layout.schema.expertTensorNames(module)
                ?? module.tensorNames(quantized: false)
        }
        #expect(hfNames.contains("model.layers.0.block_sparse_moe.experts.15.w2.weight"))
        let check = layout.check(tensorNames: hfNames)
        #expect(check.isAcceptable)
        #expect(
            check.splitModules["model.layers.0.block_sparse_moe.switch_mlp.gate_proj"]?.first
                == "model.layers.0.block_sparse_moe.experts.0.w1.weight")
        // one expert missing is named; a stacked tensor beside the per-expert ones is foreign
        let partial = layout.check(
            tensorNames: hfNames.filter { $0 != "model.layers.0.block_sparse_moe.experts.7.w3.weight" })
        #expect(partial.missing == ["model.layers.0.block_sparse_moe.experts.7.w3.weight"])
        let both = layout.check(
            tensorNames: hfNames + ["model.layers.0.block_sparse_moe.switch_mlp.up_proj.weight"])
        #expect(both.unexpected.count == 16)
    }

    @Test("expert fields: defaults of PhimoeConfig, bad values named")
    func expertFields() throws {
        let minimal = try Self.config(
            """
            {"model_type": "phimoe", "hidden_size": 64, "intermediate_size": 32,
             "num_hidden_layers": 1, "num_attention_heads": 4, "vocab_size": 100}
            """)
        let fields = minimal.fields(PhiMoESchema.Fields.self)
        #expect(fields.experts == 16 && fields.expertsPerToken == 2)
        #expect(!fields.attentionBias && !fields.lmHeadBias && fields.routerJitterNoise == 0.01)
        for (field, stored, value) in [
            ("num_experts_per_tok", "2", "17"), ("num_local_experts", "16", "0"),
            ("router_jitter_noise", "0.01", "-1"),
        ] {
            let text = Self.phi35MoE.replacingOccurrences(
                of: "\"\(field)\": \(stored),", with: "\"\(field)\": \(value),")
            #expect(text != Self.phi35MoE)
            let error = #expect(throws: ConfigError.self, "\(field) \(value)") {
                try Self.config(text)
            }
            #expect(error?.message.contains(field) == true, "\(error?.message ?? "")")
        }
    }
}

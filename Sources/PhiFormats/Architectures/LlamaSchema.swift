/// `model_type: llama` (Llama 2 and 3.x, SmolLM/SmolLM2, TinyLlama, llama2.c exports):
/// separate q/k/v/o and gate/up/down projections without biases, RMSNorms, SwiGLU, plain
/// RoPE over the whole head (or Llama 3's `llama3` frequency scaling), `lm_head` unless tied.
/// Module tree of mlx-lm's `mlx_lm/models/llama.py`, names as transformers'
/// `LlamaForCausalLM`.
public struct LlamaSchema: ArchitectureSchema {
    public init() {}

    public var modelType: String { "llama" }
    public var outputHead: String { "lm_head" }
    /// transformers' LlamaConfig.
    public var defaultMaxPositions: Int { 2048 }
    public var fieldsType: any ArchitectureFields.Type { Fields.self }

    /// The config.json fields only llama reads: its bias switches, which phikit requires off
    /// (every llama checkpoint it targets has none).
    public struct Fields: ArchitectureFields, Equatable {
        /// `attention_bias`: q/k/v/o with biases.
        public var attentionBias = false
        /// `mlp_bias`: gate/up/down with biases.
        public var mlpBias = false

        public init() {}

        enum CodingKeys: String, CodingKey {
            case attentionBias = "attention_bias"
            case mlpBias = "mlp_bias"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            attentionBias = try c.decodeIfPresent(Bool.self, forKey: .attentionBias) ?? false
            mlpBias = try c.decodeIfPresent(Bool.self, forKey: .mlpBias) ?? false
        }
    }

    /// mlx order: embed_tokens; per layer self_attn (q_proj, k_proj, v_proj, o_proj), mlp
    /// (gate_proj, down_proj, up_proj), input_layernorm, post_attention_layernorm; norm;
    /// lm_head unless tied.
    public func modules(_ config: ModelConfig) -> [ModuleSpec] {
        let (hidden, ffn) = (config.hiddenSize, config.intermediateSize)
        return decoderModules(config, finalNorm: ModuleSpec("model.norm", .norm, shape: [hidden])) { p in
            ModuleSpec.attention(p, config) + [
                ModuleSpec(p + "mlp.gate_proj", .linear, shape: [ffn, hidden]),
                ModuleSpec(p + "mlp.down_proj", .linear, shape: [hidden, ffn]),
                ModuleSpec(p + "mlp.up_proj", .linear, shape: [ffn, hidden]),
            ] + ModuleSpec.layerNorms(p, config)
        }
    }

    /// The fields llama reads beyond the shared ones: SiLU, no biases, full rotary, and of the
    /// scalings only `linear` and Llama 3's `llama3` (LongRoPE is phi3's).
    public func validate(_ config: ModelConfig) throws(ConfigError) {
        if let act = config.hiddenAct, act != "silu" {
            throw config.invalid("hidden_act", "'\(act)' is not supported for llama (silu)")
        }
        let fields = config.fields(Fields.self)
        for (field, on) in [("attention_bias", fields.attentionBias), ("mlp_bias", fields.mlpBias)] where on {
            throw config.invalid(field, "must be false for llama (phikit runs projections without biases)")
        }
        if config.partialRotaryFactor != 1 {
            throw config.invalid(
                "partial_rotary_factor", "must be 1 for llama (the whole head is rotated)")
        }
        if let scaling = config.ropeScaling, scaling.isLongRope {
            throw config.invalid(
                "rope_scaling.type", "'\(scaling.type)' is not supported for llama (linear, llama3)")
        }
    }
}

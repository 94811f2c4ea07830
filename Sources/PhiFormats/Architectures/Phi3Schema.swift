/// `model_type: phi3` (Phi-3, Phi-3.5-mini, Phi-4-mini): fused `qkv_proj` and `gate_up_proj`,
/// RMSNorms, no biases, `lm_head` unless tied. Port of the module tree of mlx-lm's
/// `mlx_lm/models/phi3.py` (and transformers' `Phi3ForCausalLM`, which names them alike).
public struct Phi3Schema: ArchitectureSchema {
    public init() {}

    public var modelType: String { "phi3" }
    public var outputHead: String { "lm_head" }

    /// mlx order: embed_tokens; per layer self_attn (qkv_proj, o_proj), mlp (gate_up_proj,
    /// down_proj), input_layernorm, post_attention_layernorm; norm; lm_head unless tied.
    public func modules(_ config: ModelConfig) -> [ModuleSpec] {
        let (hidden, ffn) = (config.hiddenSize, config.intermediateSize)
        let queryDim = config.attentionHeads * config.headDim
        let qkvRows = (config.attentionHeads + 2 * config.kvHeads) * config.headDim
        return decoderModules(config, finalNorm: ModuleSpec("model.norm", .norm, shape: [hidden])) { p in
            [
                ModuleSpec(p + "self_attn.qkv_proj", .linear, shape: [qkvRows, hidden]),
                ModuleSpec(p + "self_attn.o_proj", .linear, shape: [hidden, queryDim]),
                ModuleSpec(p + "mlp.gate_up_proj", .linear, shape: [2 * ffn, hidden]),
                ModuleSpec(p + "mlp.down_proj", .linear, shape: [hidden, ffn]),
            ] + ModuleSpec.layerNorms(p, config)
        }
    }
}

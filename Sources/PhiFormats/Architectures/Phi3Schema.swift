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
        let hidden = config.hiddenSize
        let queryDim = config.attentionHeads * config.headDim
        let qkvRows = (config.attentionHeads + 2 * config.kvHeads) * config.headDim
        let intermediate = config.intermediateSize
        var out = [ModuleSpec("model.embed_tokens", .embedding, shape: [config.vocabSize, hidden])]
        out.reserveCapacity(2 + 6 * config.layerCount + 1)
        for layer in 0..<config.layerCount {
            let p = "model.layers.\(layer)."
            out += [
                ModuleSpec(p + "self_attn.qkv_proj", .linear, shape: [qkvRows, hidden]),
                ModuleSpec(p + "self_attn.o_proj", .linear, shape: [hidden, queryDim]),
                ModuleSpec(p + "mlp.gate_up_proj", .linear, shape: [2 * intermediate, hidden]),
                ModuleSpec(p + "mlp.down_proj", .linear, shape: [hidden, intermediate]),
                ModuleSpec(p + "input_layernorm", .norm, shape: [hidden]),
                ModuleSpec(p + "post_attention_layernorm", .norm, shape: [hidden]),
            ]
        }
        out.append(ModuleSpec("model.norm", .norm, shape: [hidden]))
        if !config.tieWordEmbeddings {
            out.append(ModuleSpec(outputHead, .linear, shape: [config.vocabSize, hidden]))
        }
        return out
    }
}

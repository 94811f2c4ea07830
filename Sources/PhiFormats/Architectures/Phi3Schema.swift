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

/// `phi3` GGUF (llama.cpp's Phi3MiniModel: Phi-3, 3.5-mini, 4-mini): fused `attn_qkv` and
/// gate+up `ffn_up`, nothing permuted (NeoX rope), LongRoPE factors as
/// `rope_factors_long/short` (read into config). Files with separate `attn_q/k/v` or
/// `ffn_gate` are fused here (q, k, v rows; gate rows, then up rows: Phi3MLP applies SiLU to
/// the first half).
extension Phi3Schema: GGUFArchitecture {
    public var ggufName: String { "phi3" }

    public func ggufLayout(_ picker: GGUFTensorPicker, _ h: GGUFShape) throws -> GGUFModelLayout {
        typealias Part = GGUFModelLayout.Part
        func part(_ name: String, _ shape: [Int]) throws -> Part {
            Part(tensor: try picker.take(name, shape))
        }
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [GGUFModelLayout.Module] = []
        func add(_ name: String, _ parts: [Part]) {
            modules.append(GGUFModelLayout.Module(name: name, parts: parts))
        }
        add("model.embed_tokens.weight", [try part("token_embd.weight", [h.vocab, hidden])])
        for l in 0..<h.layers {
            let b = "blk.\(l)."
            let p = "model.layers.\(l)."
            add(p + "input_layernorm.weight", [try part(b + "attn_norm.weight", [hidden])])
            let qkv =
                picker.has(b + "attn_qkv.weight")
                ? [try part(b + "attn_qkv.weight", [qRows + 2 * kvRows, hidden])]
                : [
                    try part(b + "attn_q.weight", [qRows, hidden]),
                    try part(b + "attn_k.weight", [kvRows, hidden]),
                    try part(b + "attn_v.weight", [kvRows, hidden]),
                ]
            add(p + "self_attn.qkv_proj.weight", qkv)
            add(p + "self_attn.o_proj.weight", [try part(b + "attn_output.weight", [hidden, qRows])])
            add(p + "post_attention_layernorm.weight", [try part(b + "ffn_norm.weight", [hidden])])
            let gateUp =
                picker.has(b + "ffn_gate.weight")
                ? [
                    try part(b + "ffn_gate.weight", [h.intermediate, hidden]),
                    try part(b + "ffn_up.weight", [h.intermediate, hidden]),
                ]
                : [try part(b + "ffn_up.weight", [2 * h.intermediate, hidden])]
            add(p + "mlp.gate_up_proj.weight", gateUp)
            add(p + "mlp.down_proj.weight", [try part(b + "ffn_down.weight", [hidden, h.intermediate])])
        }
        add("model.norm.weight", [try part("output_norm.weight", [hidden])])
        let tied = picker.outputIsTied(embedding: modules[0].parts[0].tensor)
        if !tied { add("lm_head.weight", [try part("output.weight", [h.vocab, hidden])]) }

        let factors = h.ropeDim / 2
        func ropeFactors(_ name: String) throws -> GGUFTensorInfo? {
            picker.has(name) ? try picker.take(name, [factors]) : nil
        }
        return GGUFModelLayout(
            modules: modules, tied: tied,
            ropeFactorsLong: try ropeFactors("rope_factors_long.weight"),
            ropeFactorsShort: try ropeFactors("rope_factors_short.weight"))
    }

    /// transformers' Phi3Config.
    public func ggufConfig(_ c: GGUFConfigInputs) -> [(key: String, value: JSONValue)] {
        let (shape, h) = (c.shape, c.metadata)
        return [
            ("architectures", .array([.string("Phi3ForCausalLM")])),
            ("attention_bias", .bool(false)), ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", c.eos),
            ("hidden_act", .string("silu")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string(modelType)),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            (
                "original_max_position_embeddings",
                .int(h.ropeOriginalContextLength ?? shape.contextLength)
            ),
            ("partial_rotary_factor", c.partialRotaryFactor),
            ("resid_pdrop", .double(0)),
            ("rms_norm_eps", GGUFConfigInputs.epsilon(h.rmsEpsilon)),
            ("rope_scaling", c.ropeScaling),
            ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("sliding_window", h.slidingWindow.flatMap { $0 > 0 ? .int($0) : nil } ?? .null),  // 0: none
            ("tie_word_embeddings", .bool(c.tied)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

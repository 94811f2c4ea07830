import PhiFormats

extension GGUFModelLayout {
    /// `phi3` GGUF (llama.cpp's Phi3MiniModel: Phi-3, 3.5-mini, 4-mini) → the Hugging Face
    /// `model_type: phi3` names (Phi3Schema): fused `attn_qkv` and gate+up `ffn_up`, nothing
    /// permuted (NeoX rope), LongRoPE factors as `rope_factors_long/short` (read into
    /// config). Files with separate `attn_q/k/v` or `ffn_gate` are fused here (q, k, v rows;
    /// gate rows, then up rows: Phi3MLP applies SiLU to the first half).
    static func phi3(_ file: GGUFFile, _ h: GGUFShape) throws -> GGUFModelLayout {
        let picker = GGUFTensorPicker(file)
        func tensor(_ name: String, _ shape: [Int]) throws -> GGUFTensorInfo {
            try picker.take(name, shape)
        }
        func part(_ name: String, _ shape: [Int]) throws -> Part {
            Part(tensor: try tensor(name, shape))
        }
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [Module] = []
        func add(_ name: String, _ parts: [Part]) {
            modules.append(Module(name: name, parts: parts))
        }
        add("model.embed_tokens.weight", [try part("token_embd.weight", [h.vocab, hidden])])
        for l in 0..<h.layers {
            let b = "blk.\(l)."
            let p = "model.layers.\(l)."
            add(p + "input_layernorm.weight", [try part(b + "attn_norm.weight", [hidden])])
            if file.tensor(b + "attn_qkv.weight") != nil {
                add(
                    p + "self_attn.qkv_proj.weight",
                    [try part(b + "attn_qkv.weight", [qRows + 2 * kvRows, hidden])])
            } else {
                add(
                    p + "self_attn.qkv_proj.weight",
                    [
                        try part(b + "attn_q.weight", [qRows, hidden]),
                        try part(b + "attn_k.weight", [kvRows, hidden]),
                        try part(b + "attn_v.weight", [kvRows, hidden]),
                    ])
            }
            add(p + "self_attn.o_proj.weight", [try part(b + "attn_output.weight", [hidden, qRows])])
            add(p + "post_attention_layernorm.weight", [try part(b + "ffn_norm.weight", [hidden])])
            if file.tensor(b + "ffn_gate.weight") != nil {
                add(
                    p + "mlp.gate_up_proj.weight",
                    [
                        try part(b + "ffn_gate.weight", [h.intermediate, hidden]),
                        try part(b + "ffn_up.weight", [h.intermediate, hidden]),
                    ])
            } else {
                add(
                    p + "mlp.gate_up_proj.weight",
                    [try part(b + "ffn_up.weight", [2 * h.intermediate, hidden])])
            }
            add(p + "mlp.down_proj.weight", [try part(b + "ffn_down.weight", [hidden, h.intermediate])])
        }
        add("model.norm.weight", [try part("output_norm.weight", [hidden])])
        let tied = outputIsTied(file, embedding: modules[0].parts[0].tensor, picker)
        if !tied { add("lm_head.weight", [try part("output.weight", [h.vocab, hidden])]) }

        let factors = h.ropeDim / 2
        let long = try file.tensor("rope_factors_long.weight").map { _ in
            try tensor("rope_factors_long.weight", [factors])
        }
        let short = try file.tensor("rope_factors_short.weight").map { _ in
            try tensor("rope_factors_short.weight", [factors])
        }
        try picker.checkNothingLeft()
        return GGUFModelLayout(
            modules: modules, tied: tied, ropeFactorsLong: long, ropeFactorsShort: short)
    }

    /// config.json's keys for a phi3 GGUF (transformers' Phi3Config).
    static func phi3Keys(
        _ file: GGUFFile, _ shape: GGUFShape, _ h: GGUFHyperparameters, _ layout: GGUFModelLayout,
        _ c: GGUFConfig.Common
    ) throws -> [(key: String, value: JSONValue)] {
        [
            ("architectures", .array([.string("Phi3ForCausalLM")])),
            ("attention_bias", .bool(false)), ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", c.eos),
            ("hidden_act", .string("silu")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string("phi3")),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            (
                "original_max_position_embeddings",
                .int(h.ropeOriginalContextLength ?? shape.contextLength)
            ),
            ("partial_rotary_factor", .double(Double(shape.ropeDim) / Double(shape.headDim))),
            ("resid_pdrop", .double(0)),
            ("rms_norm_eps", .double(GGUFConfig.shortestDecimal(h.rmsEpsilon ?? 1e-5))),
            ("rope_scaling", try GGUFConfig.ropeScaling(file, layout)),
            ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("sliding_window", h.slidingWindow.flatMap { $0 > 0 ? .int($0) : nil } ?? .null),  // 0: none
            ("tie_word_embeddings", .bool(layout.tied)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

import PhiFormats

extension GGUFModelLayout {
    /// `llama` GGUF (llama.cpp's LlamaModel: Llama 2/3.x, SmolLM2, llama2.c exports) → the
    /// Hugging Face `model_type: llama` names (LlamaSchema), one GGUF tensor per module. q and
    /// k rows carry llama.cpp's permutation for GGML's interleaved rope, undone per head (the
    /// Hugging Face layout rotates halves, as mlx-lm's llama.py). An output matrix equal to the
    /// embedding is a tied embedding.
    static func llama(_ file: GGUFFile, _ h: GGUFShape) throws -> GGUFModelLayout {
        guard h.ropeDim == h.headDim else {
            // llama rotates the whole head; a partial rotary share is another architecture's.
            throw GGUFConvertError.missingMetadata(path: file.path, key: "llama.rope.dimension_count")
        }
        let picker = GGUFTensorPicker(file)
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [Module] = []
        func add(_ name: String, _ gguf: String, _ shape: [Int], unpermuteHeads: Int? = nil) throws {
            let part = Part(tensor: try picker.take(gguf, shape), unpermuteHeads: unpermuteHeads)
            modules.append(Module(name: name, parts: [part]))
        }
        try add("model.embed_tokens.weight", "token_embd.weight", [h.vocab, hidden])
        for l in 0..<h.layers {
            let (b, p) = ("blk.\(l).", "model.layers.\(l).")
            try add(p + "self_attn.q_proj.weight", b + "attn_q.weight", [qRows, hidden], unpermuteHeads: h.heads)
            try add(p + "self_attn.k_proj.weight", b + "attn_k.weight", [kvRows, hidden], unpermuteHeads: h.kvHeads)
            try add(p + "self_attn.v_proj.weight", b + "attn_v.weight", [kvRows, hidden])
            try add(p + "self_attn.o_proj.weight", b + "attn_output.weight", [hidden, qRows])
            try add(p + "mlp.gate_proj.weight", b + "ffn_gate.weight", [h.intermediate, hidden])
            try add(p + "mlp.down_proj.weight", b + "ffn_down.weight", [hidden, h.intermediate])
            try add(p + "mlp.up_proj.weight", b + "ffn_up.weight", [h.intermediate, hidden])
            try add(p + "input_layernorm.weight", b + "attn_norm.weight", [hidden])
            try add(p + "post_attention_layernorm.weight", b + "ffn_norm.weight", [hidden])
        }
        try add("model.norm.weight", "output_norm.weight", [hidden])
        let tied = outputIsTied(file, embedding: modules[0].parts[0].tensor, picker)
        if !tied { try add("lm_head.weight", "output.weight", [h.vocab, hidden]) }
        try picker.checkNothingLeft()
        return GGUFModelLayout(modules: modules, tied: tied, ropeFactorsLong: nil, ropeFactorsShort: nil)
    }

    /// config.json's keys for a llama GGUF (transformers' LlamaConfig): SiLU, no biases, the
    /// whole head rotated, RMSNorm epsilon as the source config said it.
    static func llamaKeys(
        _ shape: GGUFShape, _ h: GGUFHyperparameters, _ layout: GGUFModelLayout,
        _ c: GGUFConfig.Common
    ) -> [(key: String, value: JSONValue)] {
        [
            ("architectures", .array([.string("LlamaForCausalLM")])),
            ("attention_bias", .bool(false)), ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos), ("eos_token_id", c.eos),
            ("head_dim", .int(shape.headDim)),
            ("hidden_act", .string("silu")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("mlp_bias", .bool(false)),
            ("model_type", .string("llama")),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            ("pretraining_tp", .int(1)),
            ("rms_norm_eps", .double(GGUFConfig.shortestDecimal(h.rmsEpsilon ?? 1e-5))),
            ("rope_scaling", .null),
            ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("tie_word_embeddings", .bool(layout.tied)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

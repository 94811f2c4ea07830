import PhiFormats

extension GGUFModelLayout {
    /// `phi2` GGUF (llama.cpp's layout for PhiForCausalLM: Phi-1, 1.5, 2) → the Hugging Face
    /// `model_type: phi` names (PhiSchema). Every Linear and LayerNorm has a bias. Files made
    /// from the original Phi-2 checkpoint (`mixer.Wqkv`) store q, k and v fused as `attn_qkv`
    /// with one bias; newer ones store `attn_q/k/v`. The fused rows are split back into
    /// q_proj, k_proj and v_proj (rows q, then k, then v, as Wqkv and llama.cpp's
    /// `build_phi2` read them). Rope is NeoX-style, so nothing is permuted. The output
    /// matrix has its own bias and is never tied.
    static func phi2(_ file: GGUFFile, _ h: GGUFShape) throws -> GGUFModelLayout {
        let picker = GGUFTensorPicker(file)
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [Module] = []
        /// `<gguf>.weight` and `<gguf>.bias` as `<hf>.weight` and `<hf>.bias`.
        func linear(_ hf: String, _ gguf: String, _ shape: [Int]) throws {
            modules.append(
                Module(name: hf + ".weight", parts: [Part(tensor: try picker.take(gguf + ".weight", shape))]))
            modules.append(
                Module(name: hf + ".bias", parts: [Part(tensor: try picker.take(gguf + ".bias", [shape[0]]))]))
        }
        modules.append(
            Module(
                name: "model.embed_tokens.weight",
                parts: [Part(tensor: try picker.take("token_embd.weight", [h.vocab, hidden]))]))
        for l in 0..<h.layers {
            let b = "blk.\(l)."
            let p = "model.layers.\(l)."
            let attention = p + "self_attn."
            if file.tensor(b + "attn_qkv.weight") != nil {
                let rows = qRows + 2 * kvRows
                let weight = try picker.take(b + "attn_qkv.weight", [rows, hidden])
                let bias = try picker.take(b + "attn_qkv.bias", [rows])
                let shares = [("q_proj", 0..<qRows), ("k_proj", qRows..<(qRows + kvRows)),
                    ("v_proj", (qRows + kvRows)..<rows)]
                for (name, range) in shares {
                    modules.append(
                        Module(name: attention + name + ".weight", parts: [Part(tensor: weight, rows: range)]))
                    modules.append(
                        Module(name: attention + name + ".bias", parts: [Part(tensor: bias, rows: range)]))
                }
            } else {
                try linear(attention + "q_proj", b + "attn_q", [qRows, hidden])
                try linear(attention + "k_proj", b + "attn_k", [kvRows, hidden])
                try linear(attention + "v_proj", b + "attn_v", [kvRows, hidden])
            }
            try linear(attention + "dense", b + "attn_output", [hidden, qRows])
            // One LayerNorm feeds attention and MLP in parallel (no ffn_norm in phi2).
            try linear(p + "input_layernorm", b + "attn_norm", [hidden])
            try linear(p + "mlp.fc1", b + "ffn_up", [h.intermediate, hidden])
            try linear(p + "mlp.fc2", b + "ffn_down", [hidden, h.intermediate])
        }
        try linear("model.final_layernorm", "output_norm", [hidden])
        try linear("lm_head", "output", [h.vocab, hidden])
        try picker.checkNothingLeft()
        return GGUFModelLayout(
            modules: modules, tied: false, ropeFactorsLong: nil, ropeFactorsShort: nil)
    }

    /// config.json's keys for a phi2 GGUF (transformers' PhiConfig): LayerNorm epsilon,
    /// rotary share as rope dims / head dim (Phi-2: 32 / 80 = 0.4), plain RoPE.
    static func phiKeys(
        _ shape: GGUFShape, _ h: GGUFHyperparameters, _ c: GGUFConfig.Common
    ) -> [(key: String, value: JSONValue)] {
        [
            ("architectures", .array([.string("PhiForCausalLM")])),
            ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", c.eos),
            ("hidden_act", .string("gelu_new")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("layer_norm_eps", .double(GGUFConfig.shortestDecimal(h.layerNormEpsilon ?? 1e-5))),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string("phi")),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            ("partial_rotary_factor", .double(Double(shape.ropeDim) / Double(shape.headDim))),
            ("qk_layernorm", .bool(false)), ("resid_pdrop", .double(0)),
            ("rope_scaling", .null), ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("tie_word_embeddings", .bool(false)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

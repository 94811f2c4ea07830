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

/// `llama` GGUF (llama.cpp's LlamaModel: Llama 2/3.x, SmolLM2, llama2.c exports): one GGUF
/// tensor per module. q and k rows carry llama.cpp's permutation for GGML's interleaved rope,
/// undone per head (the Hugging Face layout rotates halves, as mlx-lm's llama.py). An output
/// matrix equal to the embedding is a tied embedding.
extension LlamaSchema: GGUFArchitecture {
    public var ggufName: String { "llama" }

    public func ggufLayout(_ picker: GGUFTensorPicker, _ h: GGUFShape) throws -> GGUFModelLayout {
        guard h.ropeDim == h.headDim else {
            // llama rotates the whole head; a partial rotary share is another architecture's.
            throw GGUFConvertError.missingMetadata(
                path: picker.file.path, key: "llama.rope.dimension_count")
        }
        let hidden = h.hidden
        let qRows = h.heads * h.headDim
        let kvRows = h.kvHeads * h.headDim
        var modules: [GGUFModelLayout.Module] = []
        func add(_ name: String, _ gguf: String, _ shape: [Int], unpermuteHeads: Int? = nil) throws {
            let part = GGUFModelLayout.Part(
                tensor: try picker.take(gguf, shape), unpermuteHeads: unpermuteHeads)
            modules.append(GGUFModelLayout.Module(name: name, parts: [part]))
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
        let tied = picker.outputIsTied(embedding: modules[0].parts[0].tensor)
        if !tied { try add("lm_head.weight", "output.weight", [h.vocab, hidden]) }
        return GGUFModelLayout(modules: modules, tied: tied)
    }

    /// transformers' LlamaConfig: SiLU, no biases, the whole head rotated, RMSNorm epsilon as
    /// the source config said it.
    public func ggufConfig(_ c: GGUFConfigInputs) -> [(key: String, value: JSONValue)] {
        let (shape, h) = (c.shape, c.metadata)
        return [
            ("architectures", .array([.string("LlamaForCausalLM")])),
            ("attention_bias", .bool(false)), ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos), ("eos_token_id", c.eos),
            ("head_dim", .int(shape.headDim)),
            ("hidden_act", .string("silu")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("mlp_bias", .bool(false)),
            ("model_type", .string(modelType)),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            ("pretraining_tp", .int(1)),
            ("rms_norm_eps", GGUFConfigInputs.epsilon(h.rmsEpsilon)),
            ("rope_scaling", .null),
            ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("tie_word_embeddings", .bool(c.tied)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

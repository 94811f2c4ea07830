/// `model_type: phi` (Phi-1, Phi-1.5, Phi-2): separate q/k/v projections and `dense`, all
/// with biases; one LayerNorm (with bias) per layer feeding attention and MLP in parallel;
/// `fc1`/`fc2` with biases; `final_layernorm`; an `lm_head` with a bias, never tied. With
/// `qk_layernorm`, a LayerNorm over each query and key head (transformers' `PhiAttention`;
/// mlx-lm 0.32's phi.py has none, so such checkpoints are transformers-only).
/// Module tree of mlx-lm's `mlx_lm/models/phi.py`, names as transformers' `PhiForCausalLM`.
public struct PhiSchema: ArchitectureSchema {
    public init() {}

    public var modelType: String { "phi" }
    public var outputHead: String { "lm_head" }
    /// transformers' PhiConfig (Phi-1 and 1.5 use 0.5; Phi-2's config.json says 0.4).
    public var defaultPartialRotaryFactor: Double { 0.5 }
    public var defaultMaxPositions: Int { 2048 }
    public var fieldsType: any ArchitectureFields.Type { Fields.self }

    /// The config.json fields only phi reads (transformers' PhiConfig defaults).
    public struct Fields: ArchitectureFields, Equatable {
        /// `layer_norm_eps` of every LayerNorm.
        public var layerNormEps = 1e-5
        /// `qk_layernorm`: a LayerNorm over each query and key head before the rotation.
        public var qkLayerNorm = false

        public init() {}
        public init(layerNormEps: Double = 1e-5, qkLayerNorm: Bool = false) {
            (self.layerNormEps, self.qkLayerNorm) = (layerNormEps, qkLayerNorm)
        }

        enum CodingKeys: String, CodingKey {
            case layerNormEps = "layer_norm_eps"
            case qkLayerNorm = "qk_layernorm"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            layerNormEps = try c.decodeIfPresent(Double.self, forKey: .layerNormEps) ?? 1e-5
            qkLayerNorm = try c.decodeIfPresent(Bool.self, forKey: .qkLayerNorm) ?? false
        }
    }

    /// The activations `gelu_new` names (the tanh approximation, which is also what mlx-lm's
    /// `nn.gelu_approx` computes); `gelu_pytorch_tanh` is the same function.
    static let activations: Set<String> = ["gelu_new", "gelu_pytorch_tanh"]

    /// mlx order: embed_tokens; per layer self_attn (q_proj, k_proj, v_proj, dense, then
    /// transformers' q_layernorm, k_layernorm), input_layernorm, mlp (fc1, fc2);
    /// final_layernorm; lm_head.
    public func modules(_ config: ModelConfig) -> [ModuleSpec] {
        let (hidden, ffn) = (config.hiddenSize, config.intermediateSize)
        let qkLayerNorm = config.fields(Fields.self).qkLayerNorm
        let finalNorm = ModuleSpec("model.final_layernorm", .norm, shape: [hidden], hasBias: true)
        return decoderModules(config, finalNorm: finalNorm, headHasBias: true, tied: false) { p in
            let qkNorms = ["q_layernorm", "k_layernorm"].map {
                ModuleSpec(p + "self_attn." + $0, .norm, shape: [config.headDim], hasBias: true)
            }
            return ModuleSpec.attention(p, config, output: "dense", bias: true)
                + (qkLayerNorm ? qkNorms : []) + [
                    ModuleSpec(p + "input_layernorm", .norm, shape: [hidden], hasBias: true),
                    ModuleSpec(p + "mlp.fc1", .linear, shape: [ffn, hidden], hasBias: true),
                    ModuleSpec(p + "mlp.fc2", .linear, shape: [hidden, ffn], hasBias: true),
                ]
        }
    }

    public func validate(_ config: ModelConfig) throws(ConfigError) {
        let eps = config.fields(Fields.self).layerNormEps
        guard eps > 0, eps.isFinite else { throw config.invalid("layer_norm_eps", "must be positive") }
        if let act = config.hiddenAct, !Self.activations.contains(act) {
            throw config.invalid(
                "hidden_act", "'\(act)' is not supported for phi (gelu_new, gelu_pytorch_tanh)")
        }
        // The head has a bias of its own, so tying would leave a bias without its weight;
        // no phi checkpoint ties, and mlx-lm's phi.py always has its own lm_head.
        if config.tieWordEmbeddings {
            throw config.invalid(
                "tie_word_embeddings", "must be false for phi (lm_head has its own weight and bias)")
        }
        if let scaling = config.ropeScaling {
            throw config.invalid(
                "rope_scaling.type", "'\(scaling.type)' is not supported for phi (plain RoPE only)")
        }
    }
}

/// `phi2` GGUF (llama.cpp's layout for PhiForCausalLM: Phi-1, 1.5, 2). Every Linear and
/// LayerNorm has a bias. Files made from the original Phi-2 checkpoint (`mixer.Wqkv`) store
/// q, k and v fused as `attn_qkv` with one bias; newer ones store `attn_q/k/v`. The fused rows
/// are split back into q_proj, k_proj and v_proj (rows q, then k, then v, as Wqkv and
/// llama.cpp's `build_phi2` read them). Rope is NeoX-style, so nothing is permuted. The
/// output matrix has its own bias and is never tied.
extension PhiSchema: GGUFArchitecture {
    public var ggufName: String { "phi2" }

    public func ggufLayout(_ picker: GGUFTensorPicker, _ h: GGUFShape) throws -> GGUFModelLayout {
        typealias Module = GGUFModelLayout.Module
        typealias Part = GGUFModelLayout.Part
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
            if picker.has(b + "attn_qkv.weight") {
                let rows = qRows + 2 * kvRows
                let weight = try picker.take(b + "attn_qkv.weight", [rows, hidden])
                let bias = try picker.take(b + "attn_qkv.bias", [rows])
                let shares = [("q_proj", 0..<qRows), ("k_proj", qRows..<(qRows + kvRows)),
                    ("v_proj", (qRows + kvRows)..<rows)]
                for (name, range) in shares {
                    for (suffix, tensor) in [(".weight", weight), (".bias", bias)] {
                        modules.append(
                            Module(name: attention + name + suffix, parts: [Part(tensor: tensor, rows: range)]))
                    }
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
        return GGUFModelLayout(modules: modules, tied: false)
    }

    /// transformers' PhiConfig: LayerNorm epsilon, rotary share as rope dims / head dim,
    /// plain RoPE.
    public func ggufConfig(_ c: GGUFConfigInputs) -> [(key: String, value: JSONValue)] {
        let (shape, h) = (c.shape, c.metadata)
        return [
            ("architectures", .array([.string("PhiForCausalLM")])),
            ("attention_dropout", .double(0)),
            ("bos_token_id", c.bos),
            ("embd_pdrop", .double(0)),
            ("eos_token_id", c.eos),
            ("hidden_act", .string("gelu_new")), ("hidden_size", .int(shape.hidden)),
            ("initializer_range", .double(0.02)),
            ("intermediate_size", .int(shape.intermediate)),
            ("layer_norm_eps", GGUFConfigInputs.epsilon(h.layerNormEpsilon)),
            ("max_position_embeddings", .int(shape.contextLength)),
            ("model_type", .string(modelType)),
            ("num_attention_heads", .int(shape.heads)),
            ("num_hidden_layers", .int(shape.layers)),
            ("num_key_value_heads", .int(shape.kvHeads)),
            ("partial_rotary_factor", c.partialRotaryFactor),
            ("qk_layernorm", .bool(false)), ("resid_pdrop", .double(0)),
            ("rope_scaling", .null), ("rope_theta", .double(h.ropeFreqBase ?? 10000)),
            ("tie_word_embeddings", .bool(false)),
            ("torch_dtype", c.dtype),
            ("use_cache", .bool(true)),
            ("vocab_size", .int(shape.vocab)),
        ]
    }
}

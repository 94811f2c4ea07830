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

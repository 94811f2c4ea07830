/// `model_type: phimoe` (Phi-3.5-MoE): separate q/k/v/o projections with biases, LayerNorms
/// with biases, and in place of the MLP a router (`block_sparse_moe.gate`, a Linear without
/// bias) over `num_local_experts` SwiGLU experts; `lm_head` with a bias. Port of the module
/// tree of mlx-lm's `mlx_lm/models/phimoe.py`, which stacks the experts' weights per
/// projection as `block_sparse_moe.switch_mlp.{gate,up,down}_proj` `[experts, out, in]`
/// (`SwitchGLU`; quantized, each expert's rows are grouped as any Linear's). Hugging Face
/// checkpoints store one tensor per expert instead (`experts.E.w1/w2/w3`), which every
/// command accepts and reads as the stacked module (mlx-lm's `sanitize`).
public struct PhiMoESchema: ArchitectureSchema {
    public init() {}

    public var modelType: String { "phimoe" }
    public var outputHead: String { "lm_head" }
    public var fieldsType: any ArchitectureFields.Type { Fields.self }

    /// The config.json fields only phimoe reads (transformers' PhimoeConfig defaults).
    public struct Fields: ArchitectureFields, Equatable {
        /// `num_local_experts`.
        public var experts = 16
        /// `num_experts_per_tok`.
        public var expertsPerToken = 2
        /// `router_jitter_noise`: at inference, the width of the sparsemixer's band (see
        /// PhiMoERouter).
        public var routerJitterNoise = 0.01
        /// `attention_bias`: q/k/v/o projections with biases.
        public var attentionBias = false
        /// `lm_head_bias`: an output head with a bias.
        public var lmHeadBias = false

        public init() {}

        enum CodingKeys: String, CodingKey {
            case experts = "num_local_experts"
            case expertsPerToken = "num_experts_per_tok"
            case routerJitterNoise = "router_jitter_noise"
            case attentionBias = "attention_bias"
            case lmHeadBias = "lm_head_bias"
        }

        public init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            experts = try c.decodeIfPresent(Int.self, forKey: .experts) ?? 16
            expertsPerToken = try c.decodeIfPresent(Int.self, forKey: .expertsPerToken) ?? 2
            routerJitterNoise = try c.decodeIfPresent(Double.self, forKey: .routerJitterNoise) ?? 0.01
            attentionBias = try c.decodeIfPresent(Bool.self, forKey: .attentionBias) ?? false
            lmHeadBias = try c.decodeIfPresent(Bool.self, forKey: .lmHeadBias) ?? false
        }
    }

    /// mlx order: embed_tokens; per layer self_attn (q, k, v, o), block_sparse_moe (gate,
    /// switch_mlp gate_proj, up_proj, down_proj), input_layernorm, post_attention_layernorm;
    /// norm; lm_head unless tied.
    public func modules(_ config: ModelConfig) -> [ModuleSpec] {
        let hidden = config.hiddenSize
        let fields = config.fields(Fields.self)
        let (experts, ffn) = (fields.experts, config.intermediateSize)
        let finalNorm = ModuleSpec("model.norm", .norm, shape: [hidden], hasBias: true)
        return decoderModules(config, finalNorm: finalNorm, headHasBias: fields.lmHeadBias) { p in
            let moe = p + "block_sparse_moe."
            return ModuleSpec.attention(p, config, bias: fields.attentionBias) + [
                ModuleSpec(moe + "gate", .linear, shape: [experts, hidden]),
                ModuleSpec(moe + "switch_mlp.gate_proj", .linear, shape: [experts, ffn, hidden]),
                ModuleSpec(moe + "switch_mlp.up_proj", .linear, shape: [experts, ffn, hidden]),
                ModuleSpec(moe + "switch_mlp.down_proj", .linear, shape: [experts, hidden, ffn]),
            ] + ModuleSpec.layerNorms(p, config, bias: true)
        }
    }

    /// The expert fields (after ModelConfig.validate's shared checks).
    public func validate(_ config: ModelConfig) throws(ConfigError) {
        let fields = config.fields(Fields.self)
        let (experts, perToken) = (fields.experts, fields.expertsPerToken)
        guard experts > 0, experts <= 1 << 10 else {
            throw config.invalid(
                "num_local_experts", "must be 1 to \(1 << 10), got \(experts)")
        }
        guard perToken > 0, perToken <= experts else {
            throw config.invalid(
                "num_experts_per_tok",
                "must be 1 to num_local_experts (\(experts)), got \(perToken)")
        }
        guard fields.routerJitterNoise >= 0, fields.routerJitterNoise.isFinite else {
            throw config.invalid("router_jitter_noise", "must be a number of at least 0")
        }
    }

    /// Hugging Face's names for a stacked expert projection: `w1` is gate_proj, `w2`
    /// down_proj, `w3` up_proj (mlx-lm's `sanitize` in phimoe.py).
    public func expertTensorNames(_ module: ModuleSpec) -> [String]? {
        let names = ["gate_proj": "w1", "down_proj": "w2", "up_proj": "w3"]
        guard module.shape.count == 3, let (prefix, projection) = Self.split(module.path),
            let w = names[projection]
        else { return nil }
        return (0..<module.shape[0]).map { "\(prefix)experts.\($0).\(w).weight" }
    }

    /// `model.layers.0.block_sparse_moe.switch_mlp.up_proj` → (`model.layers.0.block_sparse_moe.`,
    /// `up_proj`).
    private static func split(_ path: String) -> (String, String)? {
        guard let range = path.range(of: "switch_mlp.", options: .backwards) else { return nil }
        return (String(path[..<range.lowerBound]), String(path[range.upperBound...]))
    }
}

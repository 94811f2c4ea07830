/// The parts of a module list every schema writes alike, so a schema's `modules` says only
/// what its layers hold.
extension ArchitectureSchema {
    /// A decoder's modules in mlx order: `model.embed_tokens`, each layer's `layer(prefix)`
    /// (prefix `model.layers.N.`), `finalNorm`, then the output head, unless `tied` (default:
    /// config.json's `tie_word_embeddings`) makes the embedding the head.
    func decoderModules(
        _ config: ModelConfig, finalNorm: ModuleSpec, headHasBias: Bool = false,
        tied: Bool? = nil, layer: (_ prefix: String) -> [ModuleSpec]
    ) -> [ModuleSpec] {
        let (vocab, hidden) = (config.vocabSize, config.hiddenSize)
        var out = [ModuleSpec("model.embed_tokens", .embedding, shape: [vocab, hidden])]
        for i in 0..<config.layerCount { out += layer("model.layers.\(i).") }
        out.append(finalNorm)
        if !(tied ?? config.tieWordEmbeddings) {
            out.append(ModuleSpec(outputHead, .linear, shape: [vocab, hidden], hasBias: headHasBias))
        }
        return out
    }
}

extension ModuleSpec {
    /// `self_attn.q_proj`, `k_proj`, `v_proj` and the output projection (`o_proj`; phi's
    /// `dense`) of the layer at `prefix`, in that order.
    static func attention(
        _ prefix: String, _ config: ModelConfig, output: String = "o_proj", bias: Bool = false
    ) -> [ModuleSpec] {
        let hidden = config.hiddenSize
        let queryDim = config.attentionHeads * config.headDim
        let kvDim = config.kvHeads * config.headDim
        let p = prefix + "self_attn."
        return [
            ModuleSpec(p + "q_proj", .linear, shape: [queryDim, hidden], hasBias: bias),
            ModuleSpec(p + "k_proj", .linear, shape: [kvDim, hidden], hasBias: bias),
            ModuleSpec(p + "v_proj", .linear, shape: [kvDim, hidden], hasBias: bias),
            ModuleSpec(p + output, .linear, shape: [hidden, queryDim], hasBias: bias),
        ]
    }

    /// `input_layernorm` and `post_attention_layernorm` of the layer at `prefix` (RMSNorms;
    /// LayerNorms with `bias`).
    static func layerNorms(_ prefix: String, _ config: ModelConfig, bias: Bool = false) -> [ModuleSpec] {
        ["input_layernorm", "post_attention_layernorm"].map {
            ModuleSpec(prefix + $0, .norm, shape: [config.hiddenSize], hasBias: bias)
        }
    }
}

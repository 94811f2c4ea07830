import PhiFormats

typealias PhiMoEWeights = DecoderWeights<PhiMoELayer>

/// One phimoe layer's weights, by their mlx names. The experts are row slices of the stacked
/// `switch_mlp` tensors (or the Hugging Face per-expert tensors): a forward pass reads an
/// expert's bytes only when it routes a token to it, so a 42B model maps its experts and
/// touches the two in use per token.
struct PhiMoELayer: DecoderLayer {
    let inputNorm: LayerNormWeights
    let query: BiasedLinear  // (heads*headDim, hidden)
    let key: BiasedLinear  // (kvHeads*headDim, hidden)
    let value: BiasedLinear  // (kvHeads*headDim, hidden)
    let output: BiasedLinear  // (hidden, heads*headDim)
    let postAttentionNorm: LayerNormWeights
    let router: BiasedLinear  // block_sparse_moe.gate (experts, hidden), no bias
    let gate: [WeightMatrix]  // per expert (intermediate, hidden)
    let up: [WeightMatrix]  // per expert (intermediate, hidden)
    let down: [WeightMatrix]  // per expert (hidden, intermediate)
    /// Every dense matrix once and `num_experts_per_tok` experts' three matrices.
    let bytesPerToken: Int

    init(_ m: ModuleBinder, prefix p: String) throws {
        let moe = p + "block_sparse_moe."
        inputNorm = try m.layerNorm(p + "input_layernorm")
        query = try m.linear(p + "self_attn.q_proj")
        key = try m.linear(p + "self_attn.k_proj")
        value = try m.linear(p + "self_attn.v_proj")
        output = try m.linear(p + "self_attn.o_proj")
        postAttentionNorm = try m.layerNorm(p + "post_attention_layernorm")
        router = try m.linear(moe + "gate")
        gate = try m.experts(moe + "switch_mlp.gate_proj")
        up = try m.experts(moe + "switch_mlp.up_proj")
        down = try m.experts(moe + "switch_mlp.down_proj")
        let k = m.layout.config.fields(PhiMoESchema.Fields.self).expertsPerToken
        let dense = [query, key, value, output, router].reduce(0) { $0 + $1.matrix.byteCount }
        bytesPerToken = dense + k * (gate[0].byteCount + up[0].byteCount + down[0].byteCount)
    }

    static func finalNorm(_ m: ModuleBinder) throws -> LayerNormWeights {
        try m.layerNorm("model.norm")
    }

    /// The experts are most of a MoE model (40 of Phi-3.5-MoE's 42B parameters) and only the
    /// routed ones are needed: the prefetch leaves them to the tokens that use them.
    static func readOnDemand(_ tensor: String) -> Bool {
        tensor.contains(".switch_mlp.") || tensor.contains(".block_sparse_moe.experts.")
    }
}

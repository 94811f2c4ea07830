import PhiFormats

typealias PhiWeights = DecoderWeights<PhiLayer>

/// One phi layer's weights, by their Hugging Face names: every Linear and LayerNorm has a
/// bias; the q/k LayerNorms exist with `qk_layernorm` only.
struct PhiLayer: DecoderLayer {
    let inputNorm: LayerNormWeights  // (hidden): feeds attention and MLP alike
    let query: BiasedLinear  // (heads*headDim, hidden)
    let key: BiasedLinear  // (kvHeads*headDim, hidden)
    let value: BiasedLinear  // (kvHeads*headDim, hidden)
    let dense: BiasedLinear  // (hidden, heads*headDim)
    /// (headDim) each, with `qk_layernorm` only.
    let queryNorm: LayerNormWeights?
    let keyNorm: LayerNormWeights?
    let fc1: BiasedLinear  // (intermediate, hidden)
    let fc2: BiasedLinear  // (hidden, intermediate)

    init(_ m: ModuleBinder, prefix p: String) throws {
        let qkLayerNorm = m.layout.config.fields(PhiSchema.Fields.self).qkLayerNorm
        inputNorm = try m.layerNorm(p + "input_layernorm")
        query = try m.linear(p + "self_attn.q_proj")
        key = try m.linear(p + "self_attn.k_proj")
        value = try m.linear(p + "self_attn.v_proj")
        dense = try m.linear(p + "self_attn.dense")
        queryNorm = qkLayerNorm ? try m.layerNorm(p + "self_attn.q_layernorm") : nil
        keyNorm = qkLayerNorm ? try m.layerNorm(p + "self_attn.k_layernorm") : nil
        fc1 = try m.linear(p + "mlp.fc1")
        fc2 = try m.linear(p + "mlp.fc2")
    }

    static func finalNorm(_ m: ModuleBinder) throws -> LayerNormWeights {
        try m.layerNorm("model.final_layernorm")
    }

    var bytesPerToken: Int {
        [query, key, value, dense, fc1, fc2].reduce(0) { $0 + $1.matrix.byteCount }
    }
}

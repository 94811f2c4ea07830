import PhiFormats

typealias LlamaWeights = DecoderWeights<LlamaLayer>

/// One llama layer's weights (no biases: LlamaSchema refuses them), by their Hugging Face names.
struct LlamaLayer: DecoderLayer {
    let inputNorm: [Float]  // (hidden)
    let query: BiasedLinear  // (heads*headDim, hidden)
    let key: BiasedLinear  // (kvHeads*headDim, hidden)
    let value: BiasedLinear  // (kvHeads*headDim, hidden)
    let output: BiasedLinear  // o_proj (hidden, heads*headDim)
    let postAttentionNorm: [Float]  // (hidden)
    let gate: BiasedLinear  // (intermediate, hidden)
    let up: BiasedLinear  // (intermediate, hidden)
    let down: BiasedLinear  // (hidden, intermediate)

    init(_ m: ModuleBinder, prefix p: String) throws {
        inputNorm = try m.vector(p + "input_layernorm")
        query = try m.linear(p + "self_attn.q_proj")
        key = try m.linear(p + "self_attn.k_proj")
        value = try m.linear(p + "self_attn.v_proj")
        output = try m.linear(p + "self_attn.o_proj")
        postAttentionNorm = try m.vector(p + "post_attention_layernorm")
        gate = try m.linear(p + "mlp.gate_proj")
        up = try m.linear(p + "mlp.up_proj")
        down = try m.linear(p + "mlp.down_proj")
    }

    static func finalNorm(_ m: ModuleBinder) throws -> [Float] { try m.vector("model.norm") }

    var bytesPerToken: Int {
        [query, key, value, output, gate, up, down].reduce(0) { $0 + $1.matrix.byteCount }
    }
}

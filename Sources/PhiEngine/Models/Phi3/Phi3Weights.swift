import PhiFormats

typealias Phi3Weights = DecoderWeights<Phi3Layer>

/// One Phi-3 layer's weights (fused projections, no biases), by their Hugging Face names.
struct Phi3Layer: DecoderLayer {
    let inputNorm: [Float]  // (hidden)
    let qkv: BiasedLinear  // (qkvRows, hidden): queries, keys, values
    let output: BiasedLinear  // o_proj (hidden, heads*headDim)
    let postAttentionNorm: [Float]  // (hidden)
    let gateUp: BiasedLinear  // (2*intermediate, hidden): gate, then up
    let down: BiasedLinear  // (hidden, intermediate)

    init(_ m: ModuleBinder, prefix p: String) throws {
        inputNorm = try m.vector(p + "input_layernorm")
        qkv = try m.linear(p + "self_attn.qkv_proj")
        output = try m.linear(p + "self_attn.o_proj")
        postAttentionNorm = try m.vector(p + "post_attention_layernorm")
        gateUp = try m.linear(p + "mlp.gate_up_proj")
        down = try m.linear(p + "mlp.down_proj")
    }

    static func finalNorm(_ m: ModuleBinder) throws -> [Float] { try m.vector("model.norm") }

    var bytesPerToken: Int {
        [qkv, output, gateUp, down].reduce(0) { $0 + $1.matrix.byteCount }
    }
}

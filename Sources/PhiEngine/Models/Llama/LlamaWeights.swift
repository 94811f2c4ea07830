import Foundation
import PhiFormats

/// Every weight of a llama model, as views into the memory-mapped safetensors files (nothing
/// is converted except the small norm vectors, widened to float32). Tensor names are the
/// exact Hugging Face names; checked against config.json when built.
final class LlamaWeights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    struct Layer: Sendable {
        let inputNorm: [Float]  // (hidden)
        let query: WeightMatrix  // (heads*headDim, hidden)
        let key: WeightMatrix  // (kvHeads*headDim, hidden)
        let value: WeightMatrix  // (kvHeads*headDim, hidden)
        let output: WeightMatrix  // o_proj (hidden, heads*headDim)
        let postAttentionNorm: [Float]  // (hidden)
        let gate: WeightMatrix  // (intermediate, hidden)
        let up: WeightMatrix  // (intermediate, hidden)
        let down: WeightMatrix  // (hidden, intermediate)
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: [Float]  // (hidden)
    /// lm_head (vocab, hidden), or the embedding itself when tied.
    let lmHead: WeightMatrix
    let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig) throws {
        let m = try ModuleBinder(files, config: config)
        embedding = try m.matrix("model.embed_tokens")
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            return Layer(
                inputNorm: try m.vector(p + "input_layernorm"),
                query: try m.matrix(p + "self_attn.q_proj"), key: try m.matrix(p + "self_attn.k_proj"),
                value: try m.matrix(p + "self_attn.v_proj"), output: try m.matrix(p + "self_attn.o_proj"),
                postAttentionNorm: try m.vector(p + "post_attention_layernorm"),
                gate: try m.matrix(p + "mlp.gate_proj"), up: try m.matrix(p + "mlp.up_proj"),
                down: try m.matrix(p + "mlp.down_proj"))
        }
        finalNorm = try m.vector("model.norm")
        lmHead = try m.outputHead(tiedTo: embedding).matrix
        storage = m.storage(files)
    }

    var bytesPerToken: Int {
        layers.reduce(lmHead.byteCount) { total, l in
            [l.query, l.key, l.value, l.output, l.gate, l.up, l.down].reduce(total) {
                $0 + $1.byteCount
            }
        }
    }
}

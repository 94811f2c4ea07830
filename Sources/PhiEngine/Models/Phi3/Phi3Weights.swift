import Foundation
import PhiFormats

/// Every weight of a Phi-3 model, as views into the memory-mapped safetensors files (nothing
/// is converted except the small norm vectors, widened to float32). Tensor names are the
/// exact Hugging Face names; checked against config.json when built.
final class Phi3Weights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    struct Layer: Sendable {
        let inputNorm: [Float]  // (hidden)
        let qkv: WeightMatrix  // (qkvRows, hidden): queries, keys, values
        let output: WeightMatrix  // o_proj (hidden, heads*headDim)
        let postAttentionNorm: [Float]  // (hidden)
        let gateUp: WeightMatrix  // (2*intermediate, hidden): gate, then up
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
                qkv: try m.matrix(p + "self_attn.qkv_proj"), output: try m.matrix(p + "self_attn.o_proj"),
                postAttentionNorm: try m.vector(p + "post_attention_layernorm"),
                gateUp: try m.matrix(p + "mlp.gate_up_proj"), down: try m.matrix(p + "mlp.down_proj"))
        }
        finalNorm = try m.vector("model.norm")
        lmHead = try m.outputHead(tiedTo: embedding).matrix
        storage = m.storage(files)
    }

    var bytesPerToken: Int {
        layers.reduce(lmHead.byteCount) {
            $0 + $1.qkv.byteCount + $1.output.byteCount + $1.gateUp.byteCount + $1.down.byteCount
        }
    }
}

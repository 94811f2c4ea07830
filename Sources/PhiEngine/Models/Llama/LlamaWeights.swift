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
    /// Keeps the mappings alive; the matrices point into them.
    private let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig, adapters: LowRankAdapters) throws {
        // The schema decides what the checkpoint must hold and which leftovers to drop, the
        // same way for run, verify and convert; then each module is bound by its HF name.
        let layout = try ModelLayout(config: config)
        _ = try files.requireTensors(of: layout)
        let reader = TensorReader(weights: files, quantization: config.quantization, adapters: adapters)
        func matrix(_ path: String) throws -> WeightMatrix {
            try reader.matrix(layout.module(path))
        }
        func vector(_ path: String) throws -> [Float] { try reader.vector(layout.module(path)) }
        embedding = try matrix("model.embed_tokens")
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            return Layer(
                inputNorm: try vector(p + "input_layernorm"),
                query: try matrix(p + "self_attn.q_proj"), key: try matrix(p + "self_attn.k_proj"),
                value: try matrix(p + "self_attn.v_proj"), output: try matrix(p + "self_attn.o_proj"),
                postAttentionNorm: try vector(p + "post_attention_layernorm"),
                gate: try matrix(p + "mlp.gate_proj"), up: try matrix(p + "mlp.up_proj"),
                down: try matrix(p + "mlp.down_proj"))
        }
        finalNorm = try vector("model.norm")
        lmHead = config.tieWordEmbeddings ? embedding : try matrix(layout.schema.outputHead)
        storage = WeightStorage(files, taking: reader)
    }

    /// Starts reading every tensor in the background (WeightStorage.prefetch).
    func prefetch() { storage.prefetch() }

    /// Bytes one decode step reads from the weights (every matrix once; the embedding row
    /// and norms are negligible).
    var bytesPerToken: Int {
        layers.reduce(lmHead.byteCount) { total, l in
            [l.query, l.key, l.value, l.output, l.gate, l.up, l.down].reduce(total) {
                $0 + $1.byteCount
            }
        }
    }
}

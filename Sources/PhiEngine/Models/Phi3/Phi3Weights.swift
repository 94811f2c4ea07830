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
                qkv: try matrix(p + "self_attn.qkv_proj"),
                output: try matrix(p + "self_attn.o_proj"),
                postAttentionNorm: try vector(p + "post_attention_layernorm"),
                gateUp: try matrix(p + "mlp.gate_up_proj"),
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
        layers.reduce(lmHead.byteCount) {
            $0 + $1.qkv.byteCount + $1.output.byteCount + $1.gateUp.byteCount + $1.down.byteCount
        }
    }
}

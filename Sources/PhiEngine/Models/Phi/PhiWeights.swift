import Foundation
import PhiFormats

/// Every weight of a phi model, as views into the memory-mapped safetensors files (nothing is
/// converted except the small norm and bias vectors, widened to float32). Tensor names are
/// the exact Hugging Face names; checked against config.json when built.
final class PhiWeights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    /// A LayerNorm's scale and shift.
    struct Norm: Sendable {
        let weight: [Float]
        let bias: [Float]
    }

    /// A Linear layer with its bias (every phi Linear has one).
    struct Linear: Sendable {
        let matrix: WeightMatrix
        let bias: [Float]
    }

    struct Layer: Sendable {
        let inputNorm: Norm  // (hidden): feeds attention and MLP alike
        let query: Linear  // (heads*headDim, hidden)
        let key: Linear  // (kvHeads*headDim, hidden)
        let value: Linear  // (kvHeads*headDim, hidden)
        let dense: Linear  // (hidden, heads*headDim)
        /// (headDim) each, with `qk_layernorm` only.
        let queryNorm: Norm?
        let keyNorm: Norm?
        let fc1: Linear  // (intermediate, hidden)
        let fc2: Linear  // (hidden, intermediate)
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: Norm  // (hidden)
    let lmHead: Linear  // (vocab, hidden)
    /// Keeps the mappings alive; the matrices point into them.
    private let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig, adapters: LowRankAdapters) throws {
        // The schema decides what the checkpoint must hold and which leftovers to drop, the
        // same way for run, verify and convert; then each module is bound by its HF name.
        let layout = try ModelLayout(config: config)
        _ = try files.requireTensors(of: layout)
        let reader = TensorReader(weights: files, quantization: config.quantization, adapters: adapters)
        func linear(_ path: String) throws -> Linear {
            let module = layout.module(path)
            return Linear(matrix: try reader.matrix(module), bias: try reader.bias(module))
        }
        func norm(_ path: String) throws -> Norm {
            let module = layout.module(path)
            return Norm(weight: try reader.vector(module), bias: try reader.bias(module))
        }
        embedding = try reader.matrix(layout.module("model.embed_tokens"))
        let qkLayerNorm = config.fields(PhiSchema.Fields.self).qkLayerNorm
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            return Layer(
                inputNorm: try norm(p + "input_layernorm"),
                query: try linear(p + "self_attn.q_proj"), key: try linear(p + "self_attn.k_proj"),
                value: try linear(p + "self_attn.v_proj"), dense: try linear(p + "self_attn.dense"),
                queryNorm: qkLayerNorm ? try norm(p + "self_attn.q_layernorm") : nil,
                keyNorm: qkLayerNorm ? try norm(p + "self_attn.k_layernorm") : nil,
                fc1: try linear(p + "mlp.fc1"), fc2: try linear(p + "mlp.fc2"))
        }
        finalNorm = try norm("model.final_layernorm")
        lmHead = try linear(layout.schema.outputHead)
        storage = WeightStorage(files, taking: reader)
    }

    /// Starts reading every tensor in the background (WeightStorage.prefetch).
    func prefetch() { storage.prefetch() }

    /// Bytes one decode step reads from the weights (every matrix once; the embedding row,
    /// norms and biases are negligible).
    var bytesPerToken: Int {
        layers.reduce(lmHead.matrix.byteCount) { total, layer in
            [layer.query, layer.key, layer.value, layer.dense, layer.fc1, layer.fc2].reduce(total) {
                $0 + $1.matrix.byteCount
            }
        }
    }
}

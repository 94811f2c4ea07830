import Foundation
import PhiFormats

/// Every weight of a phi model, as views into the memory-mapped safetensors files (nothing is
/// converted except the small norm and bias vectors, widened to float32). Tensor names are
/// the exact Hugging Face names; checked against config.json when built. Every Linear and
/// LayerNorm has a bias.
final class PhiWeights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    struct Layer: Sendable {
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
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: LayerNormWeights  // (hidden)
    let lmHead: BiasedLinear  // (vocab, hidden), never tied
    let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig) throws {
        let m = try ModuleBinder(files, config: config)
        embedding = try m.matrix("model.embed_tokens")
        let qkLayerNorm = config.fields(PhiSchema.Fields.self).qkLayerNorm
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            return Layer(
                inputNorm: try m.layerNorm(p + "input_layernorm"),
                query: try m.linear(p + "self_attn.q_proj"), key: try m.linear(p + "self_attn.k_proj"),
                value: try m.linear(p + "self_attn.v_proj"), dense: try m.linear(p + "self_attn.dense"),
                queryNorm: qkLayerNorm ? try m.layerNorm(p + "self_attn.q_layernorm") : nil,
                keyNorm: qkLayerNorm ? try m.layerNorm(p + "self_attn.k_layernorm") : nil,
                fc1: try m.linear(p + "mlp.fc1"), fc2: try m.linear(p + "mlp.fc2"))
        }
        finalNorm = try m.layerNorm("model.final_layernorm")
        lmHead = try m.linear(m.layout.schema.outputHead)
        storage = m.storage(files)
    }

    var bytesPerToken: Int {
        layers.reduce(lmHead.matrix.byteCount) { total, layer in
            [layer.query, layer.key, layer.value, layer.dense, layer.fc1, layer.fc2].reduce(total) {
                $0 + $1.matrix.byteCount
            }
        }
    }
}

import Foundation
import PhiFormats

/// Every weight of a phimoe model, as views into the memory-mapped safetensors files (only
/// norms and biases, small, are widened to float32 copies). The experts are row slices of the
/// stacked `switch_mlp` tensors (or the Hugging Face per-expert tensors): a forward pass reads
/// an expert's bytes only when it routes a token to it, so a 42B model maps its experts and
/// touches the two in use per token.
final class PhiMoEWeights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    /// A Linear with its optional bias.
    struct Linear: Sendable {
        let weight: WeightMatrix
        let bias: [Float]?  // (rows)
    }

    /// A LayerNorm's weight and bias (hidden each).
    struct Norm: Sendable {
        let weight: [Float]
        let bias: [Float]
    }

    struct Layer: Sendable {
        let inputNorm: Norm
        let query: Linear  // (heads*headDim, hidden)
        let key: Linear  // (kvHeads*headDim, hidden)
        let value: Linear  // (kvHeads*headDim, hidden)
        let output: Linear  // (hidden, heads*headDim)
        let postAttentionNorm: Norm
        let router: WeightMatrix  // block_sparse_moe.gate (experts, hidden)
        let gate: [WeightMatrix]  // per expert (intermediate, hidden)
        let up: [WeightMatrix]  // per expert (intermediate, hidden)
        let down: [WeightMatrix]  // per expert (hidden, intermediate)
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: Norm
    /// lm_head (vocab, hidden) and its bias, or the embedding itself when tied.
    let lmHead: Linear
    /// Keeps the mappings alive; the matrices point into them.
    private let storage: WeightStorage

    init(_ files: ModelWeights, config: ModelConfig, adapters: LowRankAdapters) throws {
        // The schema decides what the checkpoint holds (stacked or per-expert experts); each
        // module is then bound by its mlx name.
        let layout = try ModelLayout(config: config)
        let check = try files.requireTensors(of: layout)
        let reader = TensorReader(weights: files, quantization: config.quantization, adapters: adapters)
        func linear(_ path: String) throws -> Linear {
            let module = layout.module(path)
            return Linear(
                weight: try reader.matrix(module),
                bias: module.hasBias ? try reader.bias(module) : nil)
        }
        func norm(_ path: String) throws -> Norm {
            let module = layout.module(path)
            return Norm(weight: try reader.vector(module), bias: try reader.bias(module))
        }
        func experts(_ path: String) throws -> [WeightMatrix] {
            try reader.experts(layout.module(path), split: check.splitModules[path])
        }
        embedding = try reader.matrix(layout.module("model.embed_tokens"))
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            let moe = p + "block_sparse_moe."
            return Layer(
                inputNorm: try norm(p + "input_layernorm"),
                query: try linear(p + "self_attn.q_proj"),
                key: try linear(p + "self_attn.k_proj"),
                value: try linear(p + "self_attn.v_proj"),
                output: try linear(p + "self_attn.o_proj"),
                postAttentionNorm: try norm(p + "post_attention_layernorm"),
                router: try reader.matrix(layout.module(moe + "gate")),
                gate: try experts(moe + "switch_mlp.gate_proj"),
                up: try experts(moe + "switch_mlp.up_proj"),
                down: try experts(moe + "switch_mlp.down_proj"))
        }
        finalNorm = try norm("model.norm")
        lmHead =
            config.tieWordEmbeddings
            ? Linear(weight: embedding, bias: nil) : try linear(layout.schema.outputHead)
        storage = WeightStorage(files, taking: reader)
    }

    /// Whether `name` holds expert weights (read on demand, never prefetched).
    static func isExpertTensor(_ name: String) -> Bool {
        name.contains(".switch_mlp.") || name.contains(".block_sparse_moe.experts.")
    }

    /// Asks the kernel to start reading every tensor but the experts' now, in the background:
    /// the experts are most of a MoE model (40 of Phi-3.5-MoE's 42B parameters) and only the
    /// routed ones are needed.
    func prefetch() { storage.prefetch(skipping: Self.isExpertTensor) }

    /// Bytes one decode step reads from the weights: every dense matrix once and
    /// `expertsPerToken` experts' three matrices per layer.
    func bytesPerToken(expertsPerToken k: Int) -> Int {
        layers.reduce(lmHead.weight.byteCount) { total, l in
            let dense = [l.query, l.key, l.value, l.output].reduce(l.router.byteCount) {
                $0 + $1.weight.byteCount
            }
            let expert = l.gate[0].byteCount + l.up[0].byteCount + l.down[0].byteCount
            return total + dense + k * expert
        }
    }
}

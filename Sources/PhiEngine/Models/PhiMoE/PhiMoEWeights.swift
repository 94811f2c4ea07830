import Foundation
import PhiFormats

/// Every weight of a phimoe model, as views into the memory-mapped safetensors files (only
/// norms and biases, small, are widened to float32 copies). The experts are row slices of the
/// stacked `switch_mlp` tensors (or the Hugging Face per-expert tensors): a forward pass reads
/// an expert's bytes only when it routes a token to it, so a 42B model maps its experts and
/// touches the two in use per token.
final class PhiMoEWeights: ArchitectureWeights, @unchecked Sendable {  // immutable after init
    struct Layer: Sendable {
        let inputNorm: LayerNormWeights
        let query: BiasedLinear  // (heads*headDim, hidden)
        let key: BiasedLinear  // (kvHeads*headDim, hidden)
        let value: BiasedLinear  // (kvHeads*headDim, hidden)
        let output: BiasedLinear  // (hidden, heads*headDim)
        let postAttentionNorm: LayerNormWeights
        let router: WeightMatrix  // block_sparse_moe.gate (experts, hidden)
        let gate: [WeightMatrix]  // per expert (intermediate, hidden)
        let up: [WeightMatrix]  // per expert (intermediate, hidden)
        let down: [WeightMatrix]  // per expert (hidden, intermediate)
    }

    let embedding: WeightMatrix  // (vocab, hidden)
    let layers: [Layer]
    let finalNorm: LayerNormWeights
    /// lm_head (vocab, hidden) and its bias, or the embedding itself when tied.
    let lmHead: BiasedLinear
    let storage: WeightStorage
    /// Experts each token is routed to (`num_experts_per_tok`): how many a decode step reads.
    let expertsPerToken: Int

    init(_ files: ModelWeights, config: ModelConfig) throws {
        // The schema decides what the checkpoint holds (stacked or per-expert experts); each
        // module is then bound by its mlx name.
        let m = try ModuleBinder(files, config: config)
        embedding = try m.matrix("model.embed_tokens")
        layers = try (0..<config.layerCount).map { i in
            let p = "model.layers.\(i)."
            let moe = p + "block_sparse_moe."
            return Layer(
                inputNorm: try m.layerNorm(p + "input_layernorm"),
                query: try m.linear(p + "self_attn.q_proj"), key: try m.linear(p + "self_attn.k_proj"),
                value: try m.linear(p + "self_attn.v_proj"), output: try m.linear(p + "self_attn.o_proj"),
                postAttentionNorm: try m.layerNorm(p + "post_attention_layernorm"),
                router: try m.matrix(moe + "gate"),
                gate: try m.experts(moe + "switch_mlp.gate_proj"),
                up: try m.experts(moe + "switch_mlp.up_proj"),
                down: try m.experts(moe + "switch_mlp.down_proj"))
        }
        finalNorm = try m.layerNorm("model.norm")
        lmHead = try m.outputHead(tiedTo: embedding)
        storage = m.storage(files)
        expertsPerToken = config.fields(PhiMoESchema.Fields.self).expertsPerToken
    }

    /// Whether `name` holds expert weights (read on demand, never prefetched).
    static func isExpertTensor(_ name: String) -> Bool {
        name.contains(".switch_mlp.") || name.contains(".block_sparse_moe.experts.")
    }

    /// Asks the kernel to start reading every tensor but the experts' now, in the background:
    /// the experts are most of a MoE model (40 of Phi-3.5-MoE's 42B parameters) and only the
    /// routed ones are needed.
    func prefetch() { storage.prefetch(skipping: Self.isExpertTensor) }

    /// Every dense matrix once and `expertsPerToken` experts' three matrices per layer.
    var bytesPerToken: Int {
        layers.reduce(lmHead.matrix.byteCount) { total, l in
            let dense = [l.query, l.key, l.value, l.output].reduce(l.router.byteCount) {
                $0 + $1.matrix.byteCount
            }
            let expert = l.gate[0].byteCount + l.up[0].byteCount + l.down[0].byteCount
            return total + dense + expertsPerToken * expert
        }
    }
}

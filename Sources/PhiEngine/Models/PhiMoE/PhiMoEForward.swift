import CKernels
import Foundation

// The phimoe forward pass (transformers' PhimoeForCausalLM at inference, modeling_phimoe.py;
// mlx-lm's phimoe.py), one sectioned function in the manner of Phi3Forward.swift. Shapes:
// n = tokens in this block, dim = hidden, ffn = intermediate, hd = headDim, E = experts,
// k = experts per token.
//
// Per layer: x += o_proj(attention(rope(q, k, v projections of layernorm(x)))), then
// x += Σ_choices w · expert(layernorm(x)) with the experts and weights the router picks
// (PhiMoERouter). Each expert runs once per block over just the tokens routed to it (packed
// into `gathered`), so only those experts' rows of the mapped weights are read; every kernel
// computes a token's row the same whatever else is in the block, and each token sums its
// choices in choice order, so a token's result never depends on its block.

extension PhiMoEModel {
    /// `BlockForwardModel.forward` for phimoe: attention, then the routed experts.
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<PhiMoEModel>>,
        buffers st: PhiMoEBuffers, logitRows: Int, pool: WorkerPool
    ) {
        let (n, s, w) = (tokens.count, shape, weights)
        embed(tokens, spans: spans, into: st.shared, pool: pool)
        let layout = st.qkv.layout(s.sizes, ropeDim: s.ropeDim, window: s.window)
        let (dim, x, normed) = (s.hidden, st.x.pointer, st.normed.pointer)

        for (l, layer) in w.layers.enumerated() {
            // ---- attention: x += o_proj(attention(rope(q, k, v)))
            layerNorm(layer.inputNorm, st, rows: 0..<n)
            st.shared.project(layer.query, layer.key, layer.value, into: st.qkv, tokens: n, pool: pool)
            st.shared.attend(spans, layer: l, layout, pool: pool)
            st.shared.linear(layer.output, st.attention.pointer, tokens: n, into: st.projection.pointer, pool: pool)
            pk_add(x, st.projection.pointer, n * dim)

            // ---- experts: x += Σ_c w_c · down(up ⊙ silu(gate)) of the k experts chosen
            layerNorm(layer.postAttentionNorm, st, rows: 0..<n)
            st.shared.linear(layer.router, normed, tokens: n, into: st.routerLogits.pointer, pool: pool)
            let k = s.expertsPerToken
            for t in 0..<n {
                router.route(
                    st.routerLogits[t * s.experts], indices: st.routes.baseAddress! + t * k,
                    weights: st.routeWeights[t * k])
            }
            for e in 0..<s.experts {
                runExpert(e, of: layer, tokens: n, st, pool)
            }
            let mix = st.projection.pointer
            for t in 0..<n {
                let out = mix + t * dim
                out.update(repeating: 0, count: dim)
                for c in 0..<k {
                    let weight = st.routeWeights[t * k + c].pointee
                    let y = st.slotOutput[(t * k + c) * dim]
                    for i in 0..<dim { out[i] += weight * y[i] }
                }
            }
            pk_add(x, mix, n * dim)
        }

        // ---- logits of the last tokens: lm_head(layernorm(x))
        st.shared.logits(ofLast: logitRows, tokens: n, width: dim, head: w.lmHead, pool: pool) {
            layerNorm(w.finalNorm, st, rows: $0)
        }
    }

    /// Expert `e` over the tokens routed to it: their normed inputs packed into `gathered`,
    /// the SwiGLU MLP on those rows only, each result stored in its (token, choice) slot.
    private func runExpert(
        _ e: Int, of layer: PhiMoELayer, tokens n: Int, _ st: PhiMoEBuffers,
        _ pool: WorkerPool
    ) {
        let (dim, ffn, k) = (shape.hidden, shape.intermediate, shape.expertsPerToken)
        var m = 0
        for slot in 0..<(n * k) where st.routes[slot] == e {
            st.gathered[m * dim].update(from: st.normed[(slot / k) * dim], count: dim)
            st.members[m] = slot
            m += 1
        }
        guard m > 0 else { return }
        let prep = st.prepared.pointer
        let stride = st.preparedStride
        pool.matvec(
            layer.gate[e], st.gathered.pointer, tokens: m, into: st.gate.pointer, prep: prep,
            prepStride: stride)
        pool.matvec(
            layer.up[e], st.gathered.pointer, tokens: m, into: st.up.pointer, prep: prep,
            prepStride: stride)
        pk_silu_mul_split(st.activation.pointer, st.gate.pointer, st.up.pointer, m * ffn)
        pool.matvec(
            layer.down[e], st.activation.pointer, tokens: m, into: st.expertOutput.pointer,
            prep: prep, prepStride: stride)
        for i in 0..<m {
            st.slotOutput[st.members[i] * dim].update(from: st.expertOutput[i * dim], count: dim)
        }
    }

    /// normed[t] = layernorm(x[t]) · weight + bias, for the rows t of the block.
    private func layerNorm(_ norm: LayerNormWeights, _ st: PhiMoEBuffers, rows: Range<Int>) {
        norm.apply(from: st.x.pointer, into: st.normed.pointer, rows: rows, width: shape.hidden, eps: shape.normEps)
    }
}

import CKernels
import Foundation

// The Phi-3 forward pass (transformers' Phi3ForCausalLM, modeling_phi3.py), written as one
// sectioned function in the manner of llama2.c. Shapes: T = tokens in this block, H = hidden,
// I = intermediate, hd = headDim; a token's qkv row is [queries (heads×hd) | keys (kvHeads×hd)
// | values (kvHeads×hd)], its gate_up row [gate (I) | up (I)].

extension InferenceSession {
    /// Runs tokens[p0 ..< p0+T] (already appended to `tokens`) at positions p0…, writing
    /// their keys and values into the cache, and the last token's logits if asked.
    func forward(at p0: Int, count T: Int, logits wantLogits: Bool) {
        let s = model.shape, w = model.weights, st = state
        let H = s.hidden, I = s.intermediate, hd = s.headDim, half = s.ropeDim / 2
        let x = st.x.pointer, normed = st.normed.pointer, qkv = st.qkv.pointer
        let eps = s.rmsNormEps

        // ---- token embeddings and the rotary angles of each position
        for t in 0..<T {
            w.embedding.row(tokens[p0 + t], into: x + t * H, isa: pool.isa)
            model.rope.angles(
                position: p0 + t, long: usesLongFactors, cos: st.cos[t * half],
                sin: st.sin[t * half])
        }

        for (l, layer) in w.layers.enumerated() {
            // ---- attention: x += o_proj(attention(rope(qkv_proj(norm(x)))))
            rmsNorm(layer.inputNorm, tokens: T)
            linear(layer.qkv, normed, tokens: T, into: qkv)
            for t in 0..<T {
                let row = qkv + t * s.qkvRows
                pk_rope(row, Int32(s.heads), Int32(hd), Int32(s.ropeDim), st.cos[t * half], st.sin[t * half])
                pk_rope(
                    row + s.queryDim, Int32(s.kvHeads), Int32(hd), Int32(s.ropeDim),
                    st.cos[t * half], st.sin[t * half])
                cache.store(
                    layer: l, position: p0 + t, keys: row + s.queryDim,
                    values: row + s.queryDim + s.kvDim, kvHeads: s.kvHeads, headDim: hd)
            }
            var job = pk_attention_job(
                q: qkv, k: cache.keys(layer: l), v: cache.values(layer: l),
                out: st.attention.pointer, scores: st.scores.pointer, q_stride: s.qkvRows,
                tokens: T, pos0: p0, max_ctx: cache.capacity, window: s.window,
                heads: Int32(s.heads), kv_heads: Int32(s.kvHeads), head_dim: Int32(hd),
                scale: Float(1 / Double(hd).squareRoot()), isa: 0)
            pool.attention(&job)
            linear(layer.output, st.attention.pointer, tokens: T, into: st.projection.pointer)
            pk_add(x, st.projection.pointer, T * H)

            // ---- MLP: x += down_proj(up * silu(gate)), [gate | up] = gate_up_proj(norm(x))
            rmsNorm(layer.postAttentionNorm, tokens: T)
            linear(layer.gateUp, normed, tokens: T, into: st.gateUp.pointer)
            for t in 0..<T {
                pk_silu_mul(st.activation[t * I], st.gateUp[t * 2 * I], I)
            }
            linear(layer.down, st.activation.pointer, tokens: T, into: st.projection.pointer)
            pk_add(x, st.projection.pointer, T * H)
        }

        // ---- logits of the last token: lm_head(norm(x))
        guard wantLogits else { return }
        w.finalNorm.withUnsafeBufferPointer {
            pk_rmsnorm(normed, x + (T - 1) * H, $0.baseAddress, H, eps)
        }
        pool.matvec(w.lmHead, normed, into: st.logits.pointer, prep: st.prepared.pointer)
    }

    /// normed[t] = rmsnorm(x[t]) · weight, for the block's T tokens.
    private func rmsNorm(_ weight: [Float], tokens T: Int) {
        let H = model.shape.hidden
        weight.withUnsafeBufferPointer { w in
            for t in 0..<T {
                pk_rmsnorm(
                    state.normed[t * H], state.x[t * H], w.baseAddress, H, model.shape.rmsNormEps)
            }
        }
    }

    /// y[T][rows] = x[T][cols] · Wᵀ: the fused dequantize-dot kernel for one token, weight
    /// tiles through sgemm for a block.
    private func linear(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens T: Int,
        into y: UnsafeMutablePointer<Float>
    ) {
        if T == 1 {
            pool.matvec(m, x, into: y, prep: state.prepared.pointer)
        } else {
            pool.matmul(
                m, x, tokens: T, into: y, tiles: state.tiles.pointer, tileRows: state.tileRows)
        }
    }
}

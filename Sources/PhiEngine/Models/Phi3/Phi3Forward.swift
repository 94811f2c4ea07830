import CKernels
import Foundation

// The Phi-3 forward pass (transformers' Phi3ForCausalLM, modeling_phi3.py), written as one
// sectioned function in the manner of llama2.c. Shapes: n = tokens in this block, dim =
// hidden, ffn = intermediate, hd = headDim; a token's qkv row is [queries (heads×hd) | keys
// (kvHeads×hd) | values (kvHeads×hd)], its gate_up row [gate (ffn) | up (ffn)].

extension Phi3Sequence {
    /// Runs `tokens` at positions p0…, writing their keys and values into the cache, and the
    /// last token's logits if asked; regime 1 rotates with LongRoPE's long factors.
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, at p0: Int, regime: Int, logits wantLogits: Bool,
        pool: WorkerPool
    ) {
        let n = tokens.count
        let s = model.shape
        let w = model.weights
        let st = state
        let dim = s.hidden
        let ffn = s.intermediate
        let hd = s.headDim
        let half = s.ropeDim / 2
        let x = st.x.pointer
        let normed = st.normed.pointer
        let qkv = st.qkv.pointer
        let eps = s.rmsNormEps

        // ---- token embeddings and the rotary angles of each position
        for t in 0..<n {
            w.embedding.row(tokens[t], into: x + t * dim, isa: pool.isa)
            model.rope.angles(
                position: p0 + t, long: regime == 1, cos: st.cos[t * half],
                sin: st.sin[t * half])
        }

        for (l, layer) in w.layers.enumerated() {
            // ---- attention: x += o_proj(attention(rope(qkv_proj(norm(x)))))
            rmsNorm(layer.inputNorm, tokens: n)
            linear(layer.qkv, normed, tokens: n, into: qkv, pool: pool)
            for t in 0..<n {
                let row = qkv + t * s.qkvRows
                pk_rope(
                    row, Int32(s.heads), Int32(hd), Int32(s.ropeDim), st.cos[t * half],
                    st.sin[t * half])
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
                tokens: n, pos0: p0, max_ctx: cache.capacity, window: s.window,
                heads: Int32(s.heads), kv_heads: Int32(s.kvHeads), head_dim: Int32(hd),
                scale: Float(1 / Double(hd).squareRoot()), isa: 0)
            pool.attention(&job)
            linear(
                layer.output, st.attention.pointer, tokens: n, into: st.projection.pointer,
                pool: pool)
            pk_add(x, st.projection.pointer, n * dim)

            // ---- MLP: x += down_proj(up * silu(gate)), [gate | up] = gate_up_proj(norm(x))
            rmsNorm(layer.postAttentionNorm, tokens: n)
            linear(layer.gateUp, normed, tokens: n, into: st.gateUp.pointer, pool: pool)
            for t in 0..<n {
                pk_silu_mul(st.activation[t * ffn], st.gateUp[t * 2 * ffn], ffn)
            }
            linear(
                layer.down, st.activation.pointer, tokens: n, into: st.projection.pointer,
                pool: pool)
            pk_add(x, st.projection.pointer, n * dim)
        }

        // ---- logits of the last token: lm_head(norm(x))
        guard wantLogits else { return }
        w.finalNorm.withUnsafeBufferPointer {
            pk_rmsnorm(normed, x + (n - 1) * dim, $0.baseAddress, dim, eps)
        }
        pool.matvec(
            w.lmHead, normed, tokens: 1, into: st.logits.pointer, prep: st.prepared.pointer,
            prepStride: st.preparedStride)
    }

    /// normed[t] = rmsnorm(x[t]) · weight, for the block's n tokens.
    private func rmsNorm(_ weight: [Float], tokens n: Int) {
        let dim = model.shape.hidden
        weight.withUnsafeBufferPointer { w in
            for t in 0..<n {
                pk_rmsnorm(
                    state.normed[t * dim], state.x[t * dim], w.baseAddress, dim,
                    model.shape.rmsNormEps)
            }
        }
    }

    /// y[n][rows] = x[n][cols] · Wᵀ through the fused kernels, each weight read once for the
    /// whole block. Every kind, float32 included, computes each token's row exactly the same
    /// way whatever else is in the block, which is what makes a session's cached prefix reusable
    /// bit for bit (OpenBLAS sgemm, used here before, rounded differently with the block's
    /// size).
    private func linear(
        _ m: WeightMatrix, _ x: UnsafePointer<Float>, tokens n: Int,
        into y: UnsafeMutablePointer<Float>, pool: WorkerPool
    ) {
        pool.matvec(
            m, x, tokens: n, into: y, prep: state.prepared.pointer,
            prepStride: state.preparedStride)
    }
}

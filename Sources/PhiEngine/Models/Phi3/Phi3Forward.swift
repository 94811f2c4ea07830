import CKernels
import Foundation

// The Phi-3 forward pass (transformers' Phi3ForCausalLM, modeling_phi3.py), written as one
// sectioned function in the manner of llama2.c. Shapes: n = tokens in this block, dim =
// hidden, ffn = intermediate, hd = headDim; a token's qkv row is [queries (heads×hd) | keys
// (kvHeads×hd) | values (kvHeads×hd)], its gate_up row [gate (ffn) | up (ffn)].
//
// A block's tokens may belong to several sequences (a batch of decode steps, one token of
// each): every matrix is read once for all of them, while each span of tokens stores its keys
// and values in, and attends over, its own sequence's cache.

extension Phi3Model {
    /// `BlockForwardModel.forward` for phi3: fused qkv and gate_up rows.
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<Phi3Model>>,
        buffers st: Phi3Buffers, logitRows: Int, pool: WorkerPool
    ) {
        let (n, s, w, qkv) = (tokens.count, shape, weights, st.qkv.pointer)
        let qkvRows = Self.qkvRows(s)
        let layout = AttentionLayout(
            sizes: s.sizes, queries: TokenRows(base: qkv, stride: qkvRows),
            keys: TokenRows(base: qkv + s.queryDim, stride: qkvRows),
            values: TokenRows(base: qkv + s.queryDim + s.kvDim, stride: qkvRows),
            ropeDim: s.ropeDim, window: s.window)
        embed(tokens, spans: spans, into: st.shared, pool: pool)
        let (dim, ffn, x, normed) = (s.hidden, s.intermediate, st.x.pointer, st.normed.pointer)

        for (l, layer) in w.layers.enumerated() {
            // ---- attention: x += o_proj(attention(rope(qkv_proj(norm(x)))))
            st.shared.rmsNorm(layer.inputNorm, rows: 0..<n, width: dim, eps: s.rmsNormEps)
            st.shared.linear(layer.qkv, normed, tokens: n, into: qkv, pool: pool)
            st.shared.attend(spans, layer: l, layout, pool: pool)
            st.shared.linear(layer.output, st.attention.pointer, tokens: n, into: st.projection.pointer, pool: pool)
            pk_add(x, st.projection.pointer, n * dim)

            // ---- MLP: x += down_proj(up * silu(gate)), [gate | up] = gate_up_proj(norm(x))
            st.shared.rmsNorm(layer.postAttentionNorm, rows: 0..<n, width: dim, eps: s.rmsNormEps)
            st.shared.linear(layer.gateUp, normed, tokens: n, into: st.gateUp.pointer, pool: pool)
            pool.siluMul(st.activation.pointer, gateUp: st.gateUp.pointer, width: ffn, tokens: n)
            st.shared.linear(layer.down, st.activation.pointer, tokens: n, into: st.projection.pointer, pool: pool)
            pk_add(x, st.projection.pointer, n * dim)
        }

        // ---- logits of the last tokens: lm_head(norm(x))
        st.shared.logits(ofLast: logitRows, tokens: n, width: dim, head: w.lmHead, pool: pool) {
            st.shared.rmsNorm(w.finalNorm, rows: $0, width: dim, eps: s.rmsNormEps)
        }
    }
}

import CKernels
import Foundation

// The phi forward pass (transformers' PhiForCausalLM, modeling_phi.py; mlx-lm's phi.py), as
// one sectioned function like Phi3Forward. Per layer, one LayerNorm feeds attention and the
// MLP in parallel, and both add to the residual stream:
//     h = layernorm(x);  x = (dense(attention(rope(q, k), v)) + fc2(gelu_new(fc1(h)))) + x
// Every Linear has a bias; rotary embedding covers the first ropeDim dims of each head
// (NeoX "rotate_half" style); with qk_layernorm the queries and keys are normalised per head
// before rotation. Shapes: n = tokens in this block, dim = hidden, ffn = intermediate,
// hd = headDim.
//
// A block's tokens may belong to several sequences (a batch of decode steps, one token of
// each): every matrix is read once for all of them, while each span of tokens stores its keys
// and values in, and attends over, its own sequence's cache. Every per-token step depends on
// that token's row alone, so a token's result never depends on its block.

extension PhiModel {
    /// `BlockForwardModel.forward` for phi: one LayerNorm feeding both branches.
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<PhiModel>>,
        buffers st: PhiBuffers, logitRows: Int, pool: WorkerPool
    ) {
        let (n, s, w) = (tokens.count, shape, weights)
        // transformers' phi has no sliding window, whatever the config says
        let layout = st.qkv.layout(s.sizes, ropeDim: s.ropeDim, window: 0)
        embed(tokens, spans: spans, into: st.shared, pool: pool)
        let (dim, hd, eps) = (s.hidden, s.headDim, s.layerNormEps)
        let (x, normed) = (st.x.pointer, st.normed.pointer)
        let (queries, keys) = (st.qkv.queries.pointer, st.qkv.keys.pointer)

        for (l, layer) in w.layers.enumerated() {
            // ---- h = layernorm(x), the input of both branches
            layer.inputNorm.apply(from: x, into: normed, rows: 0..<n, width: dim, eps: eps)

            // ---- attention: dense(attention(rope(q_proj(h), k_proj(h)), v_proj(h)))
            st.shared.project(layer.query, layer.key, layer.value, into: st.qkv, tokens: n, pool: pool)
            if let qNorm = layer.queryNorm, let kNorm = layer.keyNorm {
                qNorm.apply(from: queries, into: queries, rows: 0..<(n * s.heads), width: hd, eps: eps)
                kNorm.apply(from: keys, into: keys, rows: 0..<(n * s.kvHeads), width: hd, eps: eps)
            }
            st.shared.attend(spans, layer: l, layout, pool: pool)
            st.shared.linear(layer.dense, st.attention.pointer, tokens: n, into: st.attentionOut.pointer, pool: pool)

            // ---- MLP: fc2(gelu_new(fc1(h)))
            st.shared.linear(layer.fc1, normed, tokens: n, into: st.hidden.pointer, pool: pool)
            pk_gelu_tanh(st.hidden.pointer, n * s.intermediate)
            st.shared.linear(layer.fc2, st.hidden.pointer, tokens: n, into: st.mlpOut.pointer, pool: pool)

            // ---- x = (attention + mlp) + x, in transformers' order
            pk_add(st.attentionOut.pointer, st.mlpOut.pointer, n * dim)
            pk_add(x, st.attentionOut.pointer, n * dim)
        }

        // ---- logits of the last tokens: lm_head(final_layernorm(x))
        st.shared.logits(ofLast: logitRows, tokens: n, width: dim, head: w.lmHead, pool: pool) {
            w.finalNorm.apply(from: x, into: normed, rows: $0, width: dim, eps: eps)
        }
    }
}

import CKernels
import Foundation

// The llama forward pass (transformers' LlamaForCausalLM, modeling_llama.py; mlx-lm's
// llama.py), one sectioned function like Phi3Forward, whose arithmetic it shares: RMSNorm,
// attention over rotated queries and keys (NeoX "rotate_half" over the whole head), SwiGLU.
// The projections are separate matrices (phi3 fuses q/k/v and gate/up): each writes its own
// buffer. Shapes: n = tokens in this block, dim = hidden, ffn = intermediate.
//
// A block's tokens may belong to several sequences (a batch of decode steps, one token of
// each): every matrix is read once for all of them, while each span of tokens stores its keys
// and values in, and attends over, its own sequence's cache.

extension LlamaModel {
    /// `BlockForwardModel.forward` for llama: separate projections, each into its own buffer.
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<LlamaModel>>,
        buffers st: LlamaBuffers, logitRows: Int, pool: WorkerPool
    ) {
        let (n, s, w) = (tokens.count, shape, weights)
        let layout = st.qkv.layout(s.sizes, ropeDim: s.ropeDim, window: s.window)
        embed(tokens, spans: spans, into: st.shared, pool: pool)
        let (dim, ffn, x, normed) = (s.hidden, s.intermediate, st.x.pointer, st.normed.pointer)

        for (l, layer) in w.layers.enumerated() {
            // ---- attention: x += o_proj(attention(rope(q_proj(h), k_proj(h)), v_proj(h)))
            st.shared.rmsNorm(layer.inputNorm, rows: 0..<n, width: dim, eps: s.rmsNormEps)
            st.shared.project(layer.query, layer.key, layer.value, into: st.qkv, tokens: n, pool: pool)
            st.shared.attend(spans, layer: l, layout, pool: pool)
            st.shared.linear(layer.output, st.attention.pointer, tokens: n, into: st.projection.pointer, pool: pool)
            pk_add(x, st.projection.pointer, n * dim)

            // ---- MLP: x += down_proj(up_proj(h) * silu(gate_proj(h)))
            st.shared.rmsNorm(layer.postAttentionNorm, rows: 0..<n, width: dim, eps: s.rmsNormEps)
            st.shared.linear(layer.gate, normed, tokens: n, into: st.gate.pointer, pool: pool)
            st.shared.linear(layer.up, normed, tokens: n, into: st.up.pointer, pool: pool)
            pk_silu_mul_split(st.activation.pointer, st.gate.pointer, st.up.pointer, n * ffn)
            st.shared.linear(layer.down, st.activation.pointer, tokens: n, into: st.projection.pointer, pool: pool)
            pk_add(x, st.projection.pointer, n * dim)
        }

        // ---- logits of the last tokens: lm_head(norm(x))
        st.shared.logits(ofLast: logitRows, tokens: n, width: dim, head: w.lmHead, pool: pool) {
            st.shared.rmsNorm(w.finalNorm, rows: $0, width: dim, eps: s.rmsNormEps)
        }
    }
}

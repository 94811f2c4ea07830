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
    /// Runs `tokens` (the spans cover them, in order) with the activations in `buffers`,
    /// writing keys and values into each span's cache; then the logits of the last
    /// `logitRows` tokens into `buffers.logits` (logitRows × vocab).
    func forward(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<PhiModel>>,
        buffers st: PhiBuffers, logitRows: Int, pool: WorkerPool
    ) {
        let n = tokens.count
        let s = shape
        let w = weights
        let dim = s.hidden
        let hd = s.headDim
        let half = s.ropeDim / 2
        let x = st.x.pointer
        let queries = TokenRows(base: st.queries.pointer, stride: s.queryDim)
        let keys = TokenRows(base: st.keys.pointer, stride: s.kvDim)
        let values = TokenRows(base: st.values.pointer, stride: s.kvDim)
        // transformers' phi has no sliding window, whatever the config says
        let layout = AttentionLayout(sizes: s.sizes, ropeDim: s.ropeDim, window: 0)

        // ---- token embeddings and the rotary angles of each position
        for span in spans {
            for i in 0..<span.count {
                let t = span.first + i
                w.embedding.row(tokens[t], into: x + t * dim, isa: pool.isa)
                rope.angles(
                    position: span.p0 + i, long: false, cos: st.cos[t * half],
                    sin: st.sin[t * half])
            }
        }

        for (l, layer) in w.layers.enumerated() {
            // ---- h = layernorm(x), the input of both branches
            layerNorm(layer.inputNorm, from: x, into: st.normed.pointer, rows: 0..<n, width: dim)

            // ---- attention: dense(attention(rope(q_proj(h), k_proj(h)), v_proj(h)))
            linear(layer.query, st.normed.pointer, tokens: n, into: st.queries.pointer, st, pool)
            linear(layer.key, st.normed.pointer, tokens: n, into: st.keys.pointer, st, pool)
            linear(layer.value, st.normed.pointer, tokens: n, into: st.values.pointer, st, pool)
            if let qNorm = layer.queryNorm, let kNorm = layer.keyNorm {
                layerNorm(
                    qNorm, from: st.queries.pointer, into: st.queries.pointer,
                    rows: 0..<(n * s.heads), width: hd)
                layerNorm(
                    kNorm, from: st.keys.pointer, into: st.keys.pointer,
                    rows: 0..<(n * s.kvHeads), width: hd)
            }
            for span in spans {
                span.attend(
                    layer: l, queries: queries, keys: keys, values: values,
                    out: st.attention.pointer, layout: layout, cos: st.cos, sin: st.sin, pool: pool)
            }
            linear(
                layer.dense, st.attention.pointer, tokens: n, into: st.attentionOut.pointer, st,
                pool)

            // ---- MLP: fc2(gelu_new(fc1(h)))
            linear(layer.fc1, st.normed.pointer, tokens: n, into: st.hidden.pointer, st, pool)
            pk_gelu_tanh(st.hidden.pointer, n * s.intermediate)
            linear(layer.fc2, st.hidden.pointer, tokens: n, into: st.mlpOut.pointer, st, pool)

            // ---- x = (attention + mlp) + x, in transformers' order
            pk_add(st.attentionOut.pointer, st.mlpOut.pointer, n * dim)
            pk_add(x, st.attentionOut.pointer, n * dim)
        }

        // ---- logits of the last tokens: lm_head(final_layernorm(x))
        guard logitRows > 0 else { return }
        let rows = (n - logitRows)..<n
        layerNorm(w.finalNorm, from: x, into: st.normed.pointer, rows: rows, width: dim)
        linear(
            w.lmHead, st.normed.pointer + rows.lowerBound * dim, tokens: logitRows,
            into: st.logits.pointer, st, pool)
    }

    /// out[r] = layernorm(input[r]) for the rows r of `width` floats (a token's hidden state,
    /// or one head of one token for the q/k norms).
    private func layerNorm(
        _ norm: PhiWeights.Norm, from input: UnsafePointer<Float>,
        into output: UnsafeMutablePointer<Float>, rows: Range<Int>, width: Int
    ) {
        norm.weight.withUnsafeBufferPointer { w in
            norm.bias.withUnsafeBufferPointer { b in
                for r in rows {
                    pk_layernorm(
                        output + r * width, input + r * width, w.baseAddress, b.baseAddress,
                        width, shape.layerNormEps)
                }
            }
        }
    }

    /// y[n][rows] = x[n][cols] · Wᵀ + bias through the fused kernels, each weight read once
    /// for the whole block; every token's row is computed the same way whatever else is in
    /// the block (pk_matvec.h), then its bias added.
    private func linear(
        _ layer: PhiWeights.Linear, _ x: UnsafePointer<Float>, tokens n: Int,
        into y: UnsafeMutablePointer<Float>, _ st: PhiBuffers, _ pool: WorkerPool
    ) {
        pool.matvec(
            layer.matrix, x, tokens: n, into: y, prep: st.prepared.pointer,
            prepStride: st.preparedStride)
        let rows = layer.bias.count
        layer.bias.withUnsafeBufferPointer { b in
            for t in 0..<n { pk_add(y + t * rows, b.baseAddress, rows) }
        }
    }
}

import CKernels

// The steps several architectures' forward passes share word for word, each computing a
// token's row from that row alone (so a token's result never depends on its block).

extension BlockForwardModel {
    /// The first step of every forward pass: each token's embedding row into the residual
    /// stream `x`, and its position's rotary angles (in its sequence's regime) into `cos` and
    /// `sin` (token t's at t·ropeDim/2).
    func embed(
        _ tokens: UnsafeBufferPointer<Int>, spans: some Collection<SequenceSpan<Self>>,
        into a: BlockActivations, pool: WorkerPool
    ) {
        let dim = shape.hidden
        let half = shape.ropeDim / 2
        let (embedding, rope) = (weights.embedding, rope)
        for span in spans {
            for i in 0..<span.count {
                let t = span.first + i
                embedding.row(tokens[t], into: a.x[t * dim], isa: pool.isa)
                rope.angles(
                    position: span.p0 + i, long: span.regime == 1, cos: a.cos[t * half],
                    sin: a.sin[t * half])
            }
        }
    }
}

/// A LayerNorm's scale and shift (phi, phimoe), widened to float32.
struct LayerNormWeights: Sendable {
    let weight: [Float]
    let bias: [Float]

    /// output[r] = layernorm(input[r]) for the rows r of `width` floats (a token's hidden
    /// state, or one head of one token for phi's q/k norms).
    func apply(
        from input: UnsafePointer<Float>, into output: UnsafeMutablePointer<Float>,
        rows: Range<Int>, width: Int, eps: Float
    ) {
        weight.withUnsafeBufferPointer { w in
            bias.withUnsafeBufferPointer { b in
                for r in rows {
                    pk_layernorm(
                        output + r * width, input + r * width, w.baseAddress, b.baseAddress, width,
                        eps)
                }
            }
        }
    }
}

/// A Linear layer and its bias, where the schema gives it one (phi: every Linear; phimoe:
/// with `attention_bias`, `lm_head_bias`).
struct BiasedLinear: Sendable {
    let matrix: WeightMatrix
    let bias: [Float]?  // (rows)
}

extension BlockActivations {
    /// y[n][rows] = input[n][cols] · Wᵀ + bias: `linear`, then the bias added to each token's
    /// row.
    func linear(
        _ layer: BiasedLinear, _ input: UnsafePointer<Float>, tokens n: Int,
        into y: UnsafeMutablePointer<Float>, pool: WorkerPool
    ) {
        linear(layer.matrix, input, tokens: n, into: y, pool: pool)
        guard let bias = layer.bias else { return }
        let rows = bias.count
        bias.withUnsafeBufferPointer { b in
            for t in 0..<n { pk_add(y + t * rows, b.baseAddress, rows) }
        }
    }
}

extension BlockActivations {
    /// queries, keys, values = q_proj(normed), k_proj(normed), v_proj(normed), for the
    /// architectures that project them separately.
    func project(
        _ q: BiasedLinear, _ k: BiasedLinear, _ v: BiasedLinear, into qkv: SeparateQKV,
        tokens n: Int, pool: WorkerPool
    ) {
        linear(q, normed.pointer, tokens: n, into: qkv.queries.pointer, pool: pool)
        linear(k, normed.pointer, tokens: n, into: qkv.keys.pointer, pool: pool)
        linear(v, normed.pointer, tokens: n, into: qkv.values.pointer, pool: pool)
    }

    /// The last step of every forward pass: logits = head(norm(x)) of the last `logitRows` of
    /// the block's `n` tokens, into `logits` (none when 0). `norm(rows)` writes those rows of
    /// `normed` (`width` = hidden).
    func logits(
        ofLast logitRows: Int, tokens n: Int, width: Int, head: BiasedLinear, pool: WorkerPool,
        norm: (Range<Int>) -> Void
    ) {
        guard logitRows > 0 else { return }
        let rows = (n - logitRows)..<n
        norm(rows)
        linear(
            head, normed[rows.lowerBound * width], tokens: logitRows, into: logits.pointer,
            pool: pool)
    }
}

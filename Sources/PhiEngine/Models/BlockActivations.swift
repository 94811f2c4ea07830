import CKernels

/// The activation buffers every architecture's forward pass has, sized once for a block of up
/// to `block` tokens: the residual stream, its normalised copy, the attention output, each
/// token's rotary angles, the logits, the inputs readied for the matrix kernels and the
/// attention scores. A model's buffers (`Phi3Buffers`, …) own one and add their own.
final class BlockActivations {
    /// Tokens per forward pass (prompt tokens are processed in blocks of this size).
    let block: Int
    let x: FloatBuffer  // (block, hidden) the residual stream
    let normed: FloatBuffer  // (block, hidden) the norm's output, the input of the projections
    let attention: FloatBuffer  // (block, heads*headDim) attention output, input of o_proj
    let cos: FloatBuffer  // (block, ropeDim/2) per token, attention factor included
    let sin: FloatBuffer  // (block, ropeDim/2)
    let logits: FloatBuffer  // (logitRows, vocab) of the last tokens
    let prepared: FloatBuffer  // (block, preparedStride) each input readied for the kernels
    let preparedStride: Int  // pk_matvec_prep_floats(maxColumns)
    let scores: FloatBuffer  // (threads, PK_ATTENTION_TILE, capacity) attention scores

    init(shape: some ArchitectureShape, sizing z: BufferSizing) throws(SessionError) {
        let s = shape.sizes
        let (block, ropeDim) = (z.block, shape.ropeDim)
        self.block = block
        x = try FloatBuffer(count: block * s.hidden)
        normed = try FloatBuffer(count: block * s.hidden)
        attention = try FloatBuffer(count: block * s.queryDim)
        cos = try FloatBuffer(count: block * ropeDim / 2)
        sin = try FloatBuffer(count: block * ropeDim / 2)
        logits = try FloatBuffer(count: z.logitRows * s.vocab)
        preparedStride = pk_matvec_prep_floats(s.maxColumns)
        prepared = try FloatBuffer(count: block * preparedStride)
        scores = try FloatBuffer(
            count: KVCache.scoreFloats(threads: z.threads, capacity: z.capacity))
    }
}

extension BlockActivations {
    /// normed[t] = rmsnorm(x[t]) · weight, for the rows t of the block (`width` = hidden).
    func rmsNorm(_ weight: [Float], rows: Range<Int>, width: Int, eps: Float) {
        weight.withUnsafeBufferPointer { w in
            for t in rows { pk_rmsnorm(normed[t * width], x[t * width], w.baseAddress, width, eps) }
        }
    }

    /// y[n][rows] = input[n][cols] · Wᵀ through the fused kernels, each weight read once for
    /// the whole block. Every kind, float32 included, computes each token's row exactly the
    /// same way whatever else is in the block (pk_matvec.h), which is what makes a session's
    /// cached prefix reusable bit for bit and a batch of requests equal to each request alone.
    func linear(
        _ m: WeightMatrix, _ input: UnsafePointer<Float>, tokens n: Int,
        into y: UnsafeMutablePointer<Float>, pool: WorkerPool
    ) {
        pool.matvec(m, input, tokens: n, into: y, prep: prepared.pointer, prepStride: preparedStride)
    }
}

import CKernels

/// Every activation buffer of the phi forward pass, sized once per sequence for a block of
/// up to `block` tokens; the forward pass only writes into these.
final class PhiBuffers: BlockBuffers {
    /// Tokens per forward pass (prompt tokens are processed in blocks of this size).
    let block: Int
    let x: FloatBuffer  // (block, hidden) the residual stream
    let normed: FloatBuffer  // (block, hidden) LayerNorm output, input of q/k/v and fc1
    let queries: FloatBuffer  // (block, heads*headDim)
    let keys: FloatBuffer  // (block, kvHeads*headDim)
    let values: FloatBuffer  // (block, kvHeads*headDim)
    let attention: FloatBuffer  // (block, heads*headDim) attention output, input of dense
    let attentionOut: FloatBuffer  // (block, hidden) dense output
    let hidden: FloatBuffer  // (block, intermediate) gelu(fc1(normed))
    let mlpOut: FloatBuffer  // (block, hidden) fc2 output
    let cos: FloatBuffer  // (block, ropeDim/2) per token
    let sin: FloatBuffer  // (block, ropeDim/2)
    let logits: FloatBuffer  // (logitRows, vocab) of the last tokens
    let prepared: FloatBuffer  // (block, preparedStride) each input readied for the kernels
    let preparedStride: Int  // pk_matvec_prep_floats(maxColumns)
    let scores: FloatBuffer  // (threads, capacity) attention scores per thread

    init(
        shape s: PhiShape, block: Int, capacity: Int, threads: Int, logitRows: Int = 1
    ) throws(SessionError) {
        self.block = block
        x = try FloatBuffer(count: block * s.hidden)
        normed = try FloatBuffer(count: block * s.hidden)
        queries = try FloatBuffer(count: block * s.queryDim)
        keys = try FloatBuffer(count: block * s.kvDim)
        values = try FloatBuffer(count: block * s.kvDim)
        attention = try FloatBuffer(count: block * s.queryDim)
        attentionOut = try FloatBuffer(count: block * s.hidden)
        hidden = try FloatBuffer(count: block * s.intermediate)
        mlpOut = try FloatBuffer(count: block * s.hidden)
        cos = try FloatBuffer(count: block * s.ropeDim / 2)
        sin = try FloatBuffer(count: block * s.ropeDim / 2)
        logits = try FloatBuffer(count: logitRows * s.vocab)
        preparedStride = pk_matvec_prep_floats(s.maxColumns)
        prepared = try FloatBuffer(count: block * preparedStride)
        scores = try FloatBuffer(count: threads * capacity)
    }
}

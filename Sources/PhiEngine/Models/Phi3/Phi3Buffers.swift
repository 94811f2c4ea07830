import CKernels

/// Every activation buffer of the Phi-3 forward pass, sized once per sequence for a block of
/// up to `block` tokens; the forward pass only writes into these.
final class Phi3Buffers: BlockBuffers {
    /// Tokens per forward pass (prompt tokens are processed in blocks of this size).
    let block: Int
    let x: FloatBuffer  // (block, hidden) the residual stream
    let normed: FloatBuffer  // (block, hidden) RMSNorm output, input of qkv and gate_up
    let qkv: FloatBuffer  // (block, qkvRows) queries, keys, values per token
    let attention: FloatBuffer  // (block, heads*headDim) attention output, input of o_proj
    let projection: FloatBuffer  // (block, hidden) o_proj / down_proj output
    let gateUp: FloatBuffer  // (block, 2*intermediate)
    let activation: FloatBuffer  // (block, intermediate) up * silu(gate)
    let cos: FloatBuffer  // (block, ropeDim/2) per token, attention factor included
    let sin: FloatBuffer  // (block, ropeDim/2)
    let logits: FloatBuffer  // (logitRows, vocab) of the last tokens
    let prepared: FloatBuffer  // (block, preparedStride) each input readied for the kernels
    let preparedStride: Int  // pk_matvec_prep_floats(maxColumns)
    let scores: FloatBuffer  // (threads, capacity) attention scores per thread

    init(
        shape s: Phi3Shape, block: Int, capacity: Int, threads: Int, logitRows: Int = 1
    ) throws(SessionError) {
        self.block = block
        x = try FloatBuffer(count: block * s.hidden)
        normed = try FloatBuffer(count: block * s.hidden)
        qkv = try FloatBuffer(count: block * s.qkvRows)
        attention = try FloatBuffer(count: block * s.queryDim)
        projection = try FloatBuffer(count: block * s.hidden)
        gateUp = try FloatBuffer(count: block * 2 * s.intermediate)
        activation = try FloatBuffer(count: block * s.intermediate)
        cos = try FloatBuffer(count: block * s.ropeDim / 2)
        sin = try FloatBuffer(count: block * s.ropeDim / 2)
        logits = try FloatBuffer(count: logitRows * s.vocab)
        preparedStride = pk_matvec_prep_floats(s.maxColumns)
        prepared = try FloatBuffer(count: block * preparedStride)
        scores = try FloatBuffer(count: threads * capacity)
    }
}

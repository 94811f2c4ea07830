import CKernels

/// The activation buffers of the phi forward pass, the shared ones and its own, sized once per
/// sequence (or batch) for a block of up to `block` tokens; the forward pass only writes into
/// these.
final class PhiBuffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let queries: FloatBuffer  // (block, heads*headDim)
    let keys: FloatBuffer  // (block, kvHeads*headDim)
    let values: FloatBuffer  // (block, kvHeads*headDim)
    let attentionOut: FloatBuffer  // (block, hidden) dense output
    let hidden: FloatBuffer  // (block, intermediate) gelu(fc1(normed))
    let mlpOut: FloatBuffer  // (block, hidden) fc2 output

    init(
        shape s: PhiShape, block: Int, capacity: Int, threads: Int, logitRows: Int
    ) throws(SessionError) {
        shared = try BlockActivations(
            sizes: s.sizes, ropeDim: s.ropeDim, block: block, capacity: capacity, threads: threads,
            logitRows: logitRows)
        queries = try FloatBuffer(count: block * s.queryDim)
        keys = try FloatBuffer(count: block * s.kvDim)
        values = try FloatBuffer(count: block * s.kvDim)
        attentionOut = try FloatBuffer(count: block * s.hidden)
        hidden = try FloatBuffer(count: block * s.intermediate)
        mlpOut = try FloatBuffer(count: block * s.hidden)
    }
}

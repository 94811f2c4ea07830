import CKernels

/// The activation buffers of the llama forward pass, the shared ones and its own, sized once
/// per sequence (or batch) for a block of up to `block` tokens; the forward pass only writes
/// into these.
final class LlamaBuffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let queries: FloatBuffer  // (block, heads*headDim)
    let keys: FloatBuffer  // (block, kvHeads*headDim)
    let values: FloatBuffer  // (block, kvHeads*headDim)
    let projection: FloatBuffer  // (block, hidden) o_proj / down_proj output
    let gate: FloatBuffer  // (block, intermediate)
    let up: FloatBuffer  // (block, intermediate)
    let activation: FloatBuffer  // (block, intermediate) up * silu(gate)

    init(
        shape s: LlamaShape, block: Int, capacity: Int, threads: Int, logitRows: Int
    ) throws(SessionError) {
        shared = try BlockActivations(
            sizes: s.sizes, ropeDim: s.ropeDim, block: block, capacity: capacity, threads: threads,
            logitRows: logitRows)
        queries = try FloatBuffer(count: block * s.queryDim)
        keys = try FloatBuffer(count: block * s.kvDim)
        values = try FloatBuffer(count: block * s.kvDim)
        projection = try FloatBuffer(count: block * s.hidden)
        gate = try FloatBuffer(count: block * s.intermediate)
        up = try FloatBuffer(count: block * s.intermediate)
        activation = try FloatBuffer(count: block * s.intermediate)
    }
}

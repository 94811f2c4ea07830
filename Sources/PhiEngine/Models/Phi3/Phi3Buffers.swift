import CKernels

/// The activation buffers of the Phi-3 forward pass, the shared ones and its own, sized once per
/// sequence (or batch) for a block of up to `block` tokens; the forward pass only writes into
/// these.
final class Phi3Buffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let qkv: FloatBuffer  // (block, qkvRows) queries, keys, values per token
    let projection: FloatBuffer  // (block, hidden) o_proj / down_proj output
    let gateUp: FloatBuffer  // (block, 2*intermediate)
    let activation: FloatBuffer  // (block, intermediate) up * silu(gate)

    init(shape s: RMSNormShape, sizing: BufferSizing) throws(SessionError) {
        let block = sizing.block
        shared = try BlockActivations(shape: s, sizing: sizing)
        qkv = try FloatBuffer(count: block * Phi3Model.qkvRows(s))
        projection = try FloatBuffer(count: block * s.hidden)
        gateUp = try FloatBuffer(count: block * 2 * s.intermediate)
        activation = try FloatBuffer(count: block * s.intermediate)
    }
}

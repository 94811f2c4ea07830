import CKernels

/// The activation buffers of the llama forward pass, the shared ones and its own, sized once
/// per sequence (or batch) for a block of up to `block` tokens; the forward pass only writes
/// into these.
final class LlamaBuffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let qkv: SeparateQKV  // q_proj, k_proj, v_proj outputs
    let projection: FloatBuffer  // (block, hidden) o_proj / down_proj output
    let gate: FloatBuffer  // (block, intermediate)
    let up: FloatBuffer  // (block, intermediate)
    let activation: FloatBuffer  // (block, intermediate) up * silu(gate)

    init(shape s: RMSNormShape, sizing: BufferSizing) throws(SessionError) {
        let block = sizing.block
        shared = try BlockActivations(shape: s, sizing: sizing)
        qkv = try SeparateQKV(s.sizes, block: block)
        projection = try FloatBuffer(count: block * s.hidden)
        gate = try FloatBuffer(count: block * s.intermediate)
        up = try FloatBuffer(count: block * s.intermediate)
        activation = try FloatBuffer(count: block * s.intermediate)
    }
}

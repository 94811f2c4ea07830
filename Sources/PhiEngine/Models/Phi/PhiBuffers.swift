import CKernels

/// The activation buffers of the phi forward pass, the shared ones and its own, sized once per
/// sequence (or batch) for a block of up to `block` tokens; the forward pass only writes into
/// these.
final class PhiBuffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let qkv: SeparateQKV  // q_proj, k_proj, v_proj outputs
    let attentionOut: FloatBuffer  // (block, hidden) dense output
    let hidden: FloatBuffer  // (block, intermediate) gelu(fc1(normed))
    let mlpOut: FloatBuffer  // (block, hidden) fc2 output

    init(shape s: PhiShape, sizing: BufferSizing) throws(SessionError) {
        let block = sizing.block
        shared = try BlockActivations(shape: s, sizing: sizing)
        qkv = try SeparateQKV(s.sizes, block: block)
        attentionOut = try FloatBuffer(count: block * s.hidden)
        hidden = try FloatBuffer(count: block * s.intermediate)
        mlpOut = try FloatBuffer(count: block * s.hidden)
    }
}

import CKernels

/// The activation buffers of the phimoe forward pass, the shared ones and its own, sized once
/// per sequence (or batch) for a block of up to `block` tokens; the forward pass only writes
/// into these.
final class PhiMoEBuffers: BlockBuffers {
    let shared: BlockActivations  // the buffers every architecture has
    let qkv: SeparateQKV  // q_proj, k_proj, v_proj outputs
    let projection: FloatBuffer  // (block, hidden) o_proj output, then the experts' mix
    let routerLogits: FloatBuffer  // (block, experts)
    let routeWeights: FloatBuffer  // (block, expertsPerToken) the sparsemixer's weights
    let routes: UnsafeMutableBufferPointer<Int>  // (block, expertsPerToken) chosen experts
    /// For the expert being computed: which (token, choice) slots it serves, as t·k + choice.
    let members: UnsafeMutableBufferPointer<Int>  // (block)
    let gathered: FloatBuffer  // (block, hidden) the inputs of those tokens, packed
    let gate: FloatBuffer  // (block, intermediate)
    let up: FloatBuffer  // (block, intermediate)
    let activation: FloatBuffer  // (block, intermediate) up * silu(gate)
    let expertOutput: FloatBuffer  // (block, hidden) down_proj of the packed tokens
    let slotOutput: FloatBuffer  // (block, expertsPerToken, hidden) each choice's expert output

    init(shape s: PhiMoEShape, sizing: BufferSizing) throws(SessionError) {
        let (block, k) = (sizing.block, s.expertsPerToken)
        shared = try BlockActivations(shape: s, sizing: sizing)
        qkv = try SeparateQKV(s.sizes, block: block)
        projection = try FloatBuffer(count: block * s.hidden)
        routerLogits = try FloatBuffer(count: block * s.experts)
        routeWeights = try FloatBuffer(count: block * k)
        routes = .allocate(capacity: block * k)
        members = .allocate(capacity: block * k)
        gathered = try FloatBuffer(count: block * s.hidden)
        gate = try FloatBuffer(count: block * s.intermediate)
        up = try FloatBuffer(count: block * s.intermediate)
        activation = try FloatBuffer(count: block * s.intermediate)
        expertOutput = try FloatBuffer(count: block * s.hidden)
        slotOutput = try FloatBuffer(count: block * k * s.hidden)
    }

    deinit {
        routes.deallocate()
        members.deallocate()
    }
}

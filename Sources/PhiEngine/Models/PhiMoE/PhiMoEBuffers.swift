import CKernels

/// Every activation buffer of the phimoe forward pass, sized once per sequence (or batch) for
/// a block of up to `block` tokens; the forward pass only writes into these.
final class PhiMoEBuffers: BlockBuffers {
    let block: Int
    let x: FloatBuffer  // (block, hidden) the residual stream
    let normed: FloatBuffer  // (block, hidden) LayerNorm output
    let query: FloatBuffer  // (block, heads*headDim)
    let key: FloatBuffer  // (block, kvHeads*headDim)
    let value: FloatBuffer  // (block, kvHeads*headDim)
    let attention: FloatBuffer  // (block, heads*headDim) attention output, input of o_proj
    let projection: FloatBuffer  // (block, hidden) o_proj output, then the experts' mix
    let cos: FloatBuffer  // (block, headDim/2) per token, mscale included
    let sin: FloatBuffer  // (block, headDim/2)
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
    let logits: FloatBuffer  // (logitRows, vocab)
    let prepared: FloatBuffer  // (block, preparedStride)
    let preparedStride: Int
    let scores: FloatBuffer  // (threads, capacity) attention scores per thread

    init(
        shape s: PhiMoEShape, block: Int, capacity: Int, threads: Int, logitRows: Int = 1
    ) throws(SessionError) {
        self.block = block
        let k = s.expertsPerToken
        x = try FloatBuffer(count: block * s.hidden)
        normed = try FloatBuffer(count: block * s.hidden)
        query = try FloatBuffer(count: block * s.queryDim)
        key = try FloatBuffer(count: block * s.kvDim)
        value = try FloatBuffer(count: block * s.kvDim)
        attention = try FloatBuffer(count: block * s.queryDim)
        projection = try FloatBuffer(count: block * s.hidden)
        cos = try FloatBuffer(count: block * s.headDim / 2)
        sin = try FloatBuffer(count: block * s.headDim / 2)
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
        logits = try FloatBuffer(count: logitRows * s.vocab)
        preparedStride = pk_matvec_prep_floats(s.maxColumns)
        prepared = try FloatBuffer(count: block * preparedStride)
        scores = try FloatBuffer(count: threads * capacity)
    }

    deinit {
        routes.deallocate()
        members.deallocate()
    }
}

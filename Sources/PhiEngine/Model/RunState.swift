import CKernels

/// Every activation buffer of the forward pass, sized once per session for a block of up to
/// `block` tokens; the forward pass only writes into these.
final class RunState {
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
    let logits: FloatBuffer  // (vocab) of the last token
    let prepared: FloatBuffer  // (pk_matvec_prep_floats(maxColumns)) matvec input scratch
    let scores: FloatBuffer  // (threads, capacity) attention scores per thread
    /// Floats of one thread's weight tile in the prompt path (4 MB): a matrix with `cols`
    /// columns is multiplied `tileFloats / cols` rows at a time. Large tiles matter: sgemm
    /// repacks the whole block of inputs for every tile.
    static let tileFloats = 1 << 20
    let tiles: FloatBuffer  // (threads, tileFloats)

    /// Tile rows for a matrix of `cols` columns: a multiple of 16, at least 16.
    func tileRows(columns cols: Int) -> Int { max(16, Self.tileFloats / cols / 16 * 16) }

    init(shape s: Phi3Shape, block: Int, capacity: Int, threads: Int) throws(SessionError) {
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
        logits = try FloatBuffer(count: s.vocab)
        prepared = try FloatBuffer(count: pk_matvec_prep_floats(s.maxColumns))
        scores = try FloatBuffer(count: threads * capacity)
        tiles = try FloatBuffer(count: threads * max(Self.tileFloats, 16 * s.maxColumns))
    }
}

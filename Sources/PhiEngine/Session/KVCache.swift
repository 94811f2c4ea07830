/// Keys and values of every layer for up to `capacity` positions, float32 (the precision
/// transformers' fp32 reference keeps, so cached decoding matches it).
///
/// Layout: [layer][kvHead][position][headDim] — one kv head's positions are contiguous, so
/// attention streams through them. The buffers are anonymous mappings: a long context costs
/// address space up front but resident memory only as positions fill.
final class KVCache {
    let capacity: Int
    private let keys: FloatBuffer  // (layers, kvHeads, capacity, headDim)
    private let values: FloatBuffer  // (layers, kvHeads, capacity, headDim)
    private let layerStride: Int
    private let headStride: Int

    init(layers: Int, kvHeads: Int, headDim: Int, capacity: Int) throws(SessionError) {
        self.capacity = capacity
        headStride = capacity * headDim
        layerStride = kvHeads * headStride
        keys = try FloatBuffer(count: layers * layerStride)
        values = try FloatBuffer(count: layers * layerStride)
    }

    /// This layer's keys, [kvHeads][capacity][headDim].
    func keys(layer: Int) -> UnsafeMutablePointer<Float> { keys[layer * layerStride] }
    func values(layer: Int) -> UnsafeMutablePointer<Float> { values[layer * layerStride] }

    /// Stores one position: k and v are [kvHeads][headDim] (a token's slice of qkv).
    func store(
        layer: Int, position: Int, keys k: UnsafePointer<Float>, values v: UnsafePointer<Float>,
        kvHeads: Int, headDim: Int
    ) {
        let kDst = keys(layer: layer)
        let vDst = values(layer: layer)
        for head in 0..<kvHeads {
            let at = head * headStride + position * headDim
            (kDst + at).update(from: k + head * headDim, count: headDim)
            (vDst + at).update(from: v + head * headDim, count: headDim)
        }
    }
}

import CKernels

/// How wide each cached key and value is. Half precision halves the cache's memory and the
/// bytes attention reads per token at long contexts; float32 keeps what transformers' fp32
/// reference keeps.
public enum KVCacheWidth: Int, Sendable, CaseIterable {
    case float32 = 32
    case float16 = 16

    /// What run, chat and serve use unless told (`--kv-bits`).
    public static let defaultForRun = KVCacheWidth.float16
}

/// Keys and values of every layer for up to `capacity` positions.
///
/// Layout: [layer][kvHead][position][headDim] — one kv head's positions are contiguous, so
/// attention streams through them. The buffers are anonymous mappings: a long context costs
/// address space up front but resident memory only as positions fill. A float16 cache rounds
/// each value once, to nearest even, when it is stored; reading widens exactly.
final class KVCache {
    let capacity: Int
    let width: KVCacheWidth
    private let keys: FloatBuffer  // (layers, kvHeads, capacity, headDim) elements of `width`
    private let values: FloatBuffer
    private let layerStride: Int  // elements
    private let headStride: Int

    init(
        layers: Int, kvHeads: Int, headDim: Int, capacity: Int, width: KVCacheWidth = .float32
    ) throws(SessionError) {
        self.capacity = capacity
        self.width = width
        headStride = capacity * headDim
        layerStride = kvHeads * headStride
        // FloatBuffer as zeroed pages: a half cache takes half as many float-sized slots.
        let slots = width == .float32 ? layers * layerStride : (layers * layerStride + 1) / 2
        keys = try FloatBuffer(count: slots)
        values = try FloatBuffer(count: slots)
    }

    var isHalf: Bool { width == .float16 }

    /// This layer's keys, [kvHeads][capacity][headDim] of `width`.
    func keys(layer: Int) -> UnsafeMutableRawPointer { element(keys, layer * layerStride) }
    func values(layer: Int) -> UnsafeMutableRawPointer { element(values, layer * layerStride) }

    private func element(_ buffer: FloatBuffer, _ index: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(buffer.pointer) + index * (width.rawValue / 8)
    }

    /// Stores one position: k and v are [kvHeads][headDim] (a token's slice of qkv).
    func store(
        layer: Int, position: Int, keys k: UnsafePointer<Float>, values v: UnsafePointer<Float>,
        kvHeads: Int, headDim: Int
    ) {
        for head in 0..<kvHeads {
            let at = layer * layerStride + head * headStride + position * headDim
            copy(k + head * headDim, into: element(keys, at), count: headDim)
            copy(v + head * headDim, into: element(values, at), count: headDim)
        }
    }

    private func copy(_ source: UnsafePointer<Float>, into destination: UnsafeMutableRawPointer, count: Int) {
        switch width {
        case .float32:
            destination.assumingMemoryBound(to: Float.self).update(from: source, count: count)
        case .float16:
            pk_f32_to_f16(destination.assumingMemoryBound(to: UInt16.self), source, count)
        }
    }
}

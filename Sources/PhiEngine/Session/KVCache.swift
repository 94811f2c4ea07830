import CKernels

/// How wide each cached key and value is (`--kv-bits`). Half precision halves the cache's
/// memory and the bytes attention reads per token at long contexts; 8 bits (int8 with a
/// float32 scale per 32 values, pk_attention.h) nearly halves it again, for long contexts;
/// float32 keeps what transformers' fp32 reference keeps.
public enum KVCacheWidth: Int, Sendable, CaseIterable {
    case float32 = 32
    case float16 = 16
    case int8 = 8

    /// What run, chat and serve use unless told (`--kv-bits`).
    public static let defaultForRun = KVCacheWidth.float16

    /// The row format of the C kernels (PK_KV_*).
    var kind: Int32 {
        switch self {
        case .float32: Int32(PK_KV_F32)
        case .float16: Int32(PK_KV_F16)
        case .int8: Int32(PK_KV_Q8)
        }
    }

    /// Bytes one position of one kv head takes (scales included).
    public func bytesPerRow(headDim: Int) -> Int { pk_kv_row_bytes(kind, Int32(headDim)) }
}

/// Keys and values of every layer for up to `capacity` positions.
///
/// Layout: [layer][kvHead][position] rows of `width` (pk_attention.h) — one kv head's
/// positions are contiguous, so attention streams through them. The buffers are anonymous
/// mappings: a long context costs address space up front but resident memory only as
/// positions fill. A position is rounded (float16) or quantized (int8) once, when it is
/// stored; whatever block it came in, its row is the same bytes.
final class KVCache {
    let capacity: Int
    let width: KVCacheWidth
    private let keys: FloatBuffer  // (layers, kvHeads, capacity) rows of rowBytes
    private let values: FloatBuffer
    private let rowBytes: Int
    private let layerStride: Int  // bytes
    private let headStride: Int

    init(
        layers: Int, kvHeads: Int, headDim: Int, capacity: Int, width: KVCacheWidth = .float32
    ) throws(SessionError) {
        self.capacity = capacity
        self.width = width
        rowBytes = width.bytesPerRow(headDim: headDim)
        headStride = capacity * rowBytes
        layerStride = kvHeads * headStride
        let slots = (layers * layerStride + 3) / 4  // FloatBuffer counts 4-byte slots
        keys = try FloatBuffer(count: slots)
        values = try FloatBuffer(count: slots)
    }

    /// Floats of attention-score scratch a sequence needs (pk_attention_job.scores): a tile
    /// of queries per thread, each over up to `capacity` positions.
    static func scoreFloats(threads: Int, capacity: Int) -> Int {
        threads * Int(PK_ATTENTION_TILE) * capacity
    }

    /// The row format attention reads (pk_attention_job.kv_kind).
    var kind: Int32 { width.kind }

    /// This layer's keys, [kvHeads][capacity] rows.
    func keys(layer: Int) -> UnsafeMutableRawPointer { bytes(keys, layer * layerStride) }
    func values(layer: Int) -> UnsafeMutableRawPointer { bytes(values, layer * layerStride) }

    private func bytes(_ buffer: FloatBuffer, _ offset: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(buffer.pointer) + offset
    }

    /// Stores one position: k and v are [kvHeads][headDim] (a token's slice of qkv).
    func store(
        layer: Int, position: Int, keys k: UnsafePointer<Float>, values v: UnsafePointer<Float>,
        kvHeads: Int, headDim: Int
    ) {
        for head in 0..<kvHeads {
            let at = layer * layerStride + head * headStride + position * rowBytes
            pk_kv_store(kind, bytes(keys, at), k + head * headDim, Int32(headDim))
            pk_kv_store(kind, bytes(values, at), v + head * headDim, Int32(headDim))
        }
    }
}

import CKernels

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How wide each cached key and value is (`--kv-bits`). Half precision halves the cache's
/// memory and the bytes attention reads per token at long contexts; 8 bits (values int8 with a
/// float32 scale per 32; keys centred and spread per channel on their first 32 positions,
/// then 8-bit codes with a scale and zero per 32: pk_attention.h) nearly halves it again, for
/// long contexts; float32 keeps what transformers' fp32 reference keeps.
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

    /// Bytes one position of one kv head takes (scales included), its key and value rows
    /// averaged (8-bit keys carry a zero per group more than values).
    public func bytesPerRow(headDim: Int) -> Int {
        (pk_kv_row_bytes(kind, 1, Int32(headDim)) + pk_kv_row_bytes(kind, 0, Int32(headDim)) + 1)
            / 2
    }
}

/// Keys and values of every layer for up to `capacity` positions.
///
/// Layout: [layer][kvHead] regions of `width` (pk_attention.h: a header for 8-bit keys, then
/// one row per position) — one kv head's positions are contiguous, so attention streams
/// through them. The buffers are anonymous
/// mappings: a long context costs address space up front but resident memory only as
/// positions fill. A position is rounded (float16) or quantized (int8) once, when it is
/// stored; whatever block it came in, its row is the same bytes.
final class KVCache {
    let capacity: Int
    let width: KVCacheWidth
    private let keys: FloatBuffer  // (layers, kvHeads) regions of keyHead bytes
    private let values: FloatBuffer  // (layers, kvHeads) regions of valueHead bytes
    private let keyHead: Int  // bytes of one kv head's region (pk_kv_head_bytes)
    private let valueHead: Int
    private let kvHeads: Int
    private let layers: Int
    private let headDim: Int

    init(
        layers: Int, kvHeads: Int, headDim: Int, capacity: Int, width: KVCacheWidth = .float32
    ) throws(SessionError) {
        self.capacity = capacity
        self.width = width
        self.kvHeads = kvHeads
        self.layers = layers
        self.headDim = headDim
        keyHead = pk_kv_head_bytes(width.kind, 1, Int32(headDim), capacity)
        valueHead = pk_kv_head_bytes(width.kind, 0, Int32(headDim), capacity)
        // FloatBuffer counts 4-byte slots
        keys = try FloatBuffer(count: (layers * kvHeads * keyHead + 3) / 4)
        values = try FloatBuffer(count: (layers * kvHeads * valueHead + 3) / 4)
    }

    /// Floats of attention-score scratch a sequence needs (pk_attention_job.scores): a tile
    /// of queries per thread, each over up to `capacity` positions.
    static func scoreFloats(threads: Int, capacity: Int) -> Int {
        threads * Int(PK_ATTENTION_TILE) * capacity
    }

    /// The row format attention reads (pk_attention_job.kv_kind).
    var kind: Int32 { width.kind }

    /// This layer's keys, [kvHeads][capacity] rows.
    func keys(layer: Int) -> UnsafeMutableRawPointer { bytes(keys, layer * kvHeads * keyHead) }
    func values(layer: Int) -> UnsafeMutableRawPointer {
        bytes(values, layer * kvHeads * valueHead)
    }

    private func bytes(_ buffer: FloatBuffer, _ offset: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(buffer.pointer) + offset
    }

    /// Stores one position: k and v are [kvHeads][headDim] (a token's slice of qkv). Positions
    /// come in order (8-bit keys calibrate on the first ones, pk_attention.h).
    func store(
        layer: Int, position: Int, keys k: UnsafePointer<Float>, values v: UnsafePointer<Float>,
        kvHeads: Int, headDim: Int
    ) {
        let (keyBase, valueBase) = (keys(layer: layer), values(layer: layer))
        for head in 0..<kvHeads {
            pk_kv_store(
                kind, 1, keyBase + head * keyHead, position, k + head * headDim, Int32(headDim))
            pk_kv_store(
                kind, 0, valueBase + head * valueHead, position, v + head * headDim,
                Int32(headDim))
        }
    }

    /// Bytes `rows(positions:)` takes for `n` positions.
    func rowBytes(positions n: Int) -> Int {
        width.cacheBytes(layers: layers, kvHeads: kvHeads, headDim: headDim, positions: n)
    }

    /// Positions [0, n) of every layer and kv head as stored (8-bit keys' header included),
    /// layer by layer, kv head by kv head, keys then values: what `load` puts back.
    func rows(positions n: Int) -> [UInt8] {
        let count = rowBytes(positions: n)
        return [UInt8](unsafeUninitializedCapacity: count) { out, initialized in
            copyRegions(positions: n) { region, offset, length in
                UnsafeMutableRawPointer(out.baseAddress!).advanced(by: offset)
                    .copyMemory(from: region, byteCount: length)
            }
            initialized = count
        }
    }

    /// Stores rows (as `rows(positions: n)` of a cache of this shape and width gives them) as
    /// positions [0, n): `fill` writes each kv head's region of keys and values in turn, given
    /// its offset in the flat `rows` layout. The rows are the same bytes a computation stores,
    /// so attention over them reads what it would have read.
    func load(
        positions n: Int, _ fill: (UnsafeMutableRawBufferPointer, Int) throws -> Void
    ) rethrows {
        precondition(n <= capacity)
        try copyRegions(positions: n) { region, offset, length in
            Self.prefault(region, length)
            try fill(UnsafeMutableRawBufferPointer(start: region, count: length), offset)
        }
    }

    /// Maps the pages under `length` bytes at `start` in one call (Linux 5.14's
    /// MADV_POPULATE_WRITE), which costs ~10-20% less CPU than faulting them in one by one as
    /// a restore writes them (1.5 GB of rows are 380,000 pages). Contents are unchanged;
    /// elsewhere or on an older kernel the writes fault the pages in as before.
    private static func prefault(_ start: UnsafeMutableRawPointer, _ length: Int) {
        #if os(Linux)
            let page = Int(getpagesize())
            let first = Int(bitPattern: start) & ~(page - 1)
            let end = Int(bitPattern: start) + length
            _ = madvise(UnsafeMutableRawPointer(bitPattern: first), end - first, 23)  // MADV_POPULATE_WRITE
        #endif
    }

    /// Visits each kv head's region of keys and values, the first `n` positions' bytes, with
    /// its offset in the flat `rows` layout.
    private func copyRegions(
        positions n: Int, _ body: (UnsafeMutableRawPointer, Int, Int) throws -> Void
    ) rethrows {
        let keyBytes = pk_kv_head_bytes(kind, 1, Int32(headDim), n)
        let valueBytes = pk_kv_head_bytes(kind, 0, Int32(headDim), n)
        var offset = 0
        for layer in 0..<layers {
            let (keyBase, valueBase) = (keys(layer: layer), values(layer: layer))
            for head in 0..<kvHeads {
                try body(keyBase + head * keyHead, offset, keyBytes)
                offset += keyBytes
                try body(valueBase + head * valueHead, offset, valueBytes)
                offset += valueBytes
            }
        }
    }
}

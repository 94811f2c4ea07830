/// An open-addressing hash table from byte strings to token ids, built once at load.
///
/// Loading the 200k-token vocabulary means ~800k lookups (each merge resolves three strings),
/// and each is a cache miss into a multi-megabyte table, so the layout is built for one miss
/// per lookup: a slot holds the id, the key's length, 16 bits of its hash and — for keys of up
/// to 8 bytes, most tokens — the key itself. Longer keys live in one contiguous buffer
/// (`keyBytes`), so the whole vocabulary is a few arrays rather than 200k `String`s.
struct ByteStringTable: Sendable {
    /// (2 × slots, a power of two) per slot: word 0 = tag << 48 | (length + 1) << 32 | id
    /// (0: empty); word 1 = the key's bytes (little-endian) when length ≤ 8, else its offset
    /// in `keyBytes`.
    private var slots: [UInt64]
    private var keyBytes: [UInt8] = []
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int) {
        var size = 16
        while size * 4 < capacity * 5 { size <<= 1 }  // load factor at most 0.8
        slots = [UInt64](repeating: 0, count: 2 * size)
        mask = size - 1
    }

    /// A fast 64-bit hash of short byte strings (8 bytes per step, then a final mix), and the
    /// first up-to-8 bytes packed little-endian (the inline key of short strings).
    @inline(__always)
    static func hashAndPrefix(_ key: UnsafeBufferPointer<UInt8>) -> (UInt64, UInt64) {
        let m: UInt64 = 0x9E37_79B9_7F4A_7C15
        var h = UInt64(truncatingIfNeeded: key.count) &* m
        guard var p = key.baseAddress else { return (h, 0) }
        var n = key.count
        var first: UInt64 = 0
        var isFirst = true
        while n >= 8 {
            let v = UnsafeRawPointer(p).loadUnaligned(as: UInt64.self)
            if isFirst {
                first = v
                isFirst = false
            }
            h = (h ^ v) &* m
            h ^= h >> 29
            p += 8
            n -= 8
        }
        if n > 0 {
            var v: UInt64 = 0
            for i in 0..<n { v |= UInt64(p[i]) << UInt64(8 * i) }
            if isFirst { first = v }
            h = (h ^ v) &* m
        }
        h ^= h >> 32
        h = h &* 0xD6E8_FEB8_6659_FD93
        return (h ^ (h >> 32), first)
    }

    @inline(__always)
    static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 { hashAndPrefix(key).0 }

    /// The id stored for `key`, if any.
    @inline(__always)
    func lookup(_ key: UnsafeBufferPointer<UInt8>) -> Int32? {
        let (h, prefix) = Self.hashAndPrefix(key)
        let expected = (h >> 48) << 48 | UInt64(key.count + 1) << 32
        var slot = Int(truncatingIfNeeded: h) & mask
        return slots.withUnsafeBufferPointer { slots in
            while true {
                let w0 = slots[2 * slot]
                if w0 == 0 { return nil }
                if w0 & 0xFFFF_FFFF_0000_0000 == expected {
                    let w1 = slots[2 * slot + 1]
                    if key.count <= 8 ? w1 == prefix : longKeyEqual(Int(w1), key) {
                        return Int32(truncatingIfNeeded: w0)
                    }
                }
                slot = (slot + 1) & mask
            }
        }
    }

    func lookup(_ key: [UInt8]) -> Int32? {
        key.withUnsafeBufferPointer { lookup($0) }
    }

    private func longKeyEqual(_ start: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        keyBytes.withUnsafeBufferPointer { bytes in
            for i in 0..<key.count where bytes[start + i] != key[i] { return false }
            return true
        }
    }

    /// Adds `key` → `value`, or replaces the value when the key is present; false then (the
    /// vocabulary refuses a token given twice: one JSON policy, no duplicate keys).
    @discardableResult
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>, value: Int32) -> Bool {
        precondition(key.count < 0xFFFF, "token longer than 64 KiB")
        if count * 5 >= (mask + 1) * 4 { grow() }
        let (h, prefix) = Self.hashAndPrefix(key)
        let meta = (h >> 48) << 48 | UInt64(key.count + 1) << 32
        var slot = Int(truncatingIfNeeded: h) & mask
        while slots[2 * slot] != 0 {
            if slots[2 * slot] & 0xFFFF_FFFF_0000_0000 == meta {
                let w1 = slots[2 * slot + 1]
                if key.count <= 8 ? w1 == prefix : longKeyEqual(Int(w1), key) {
                    slots[2 * slot] = meta | UInt64(UInt32(bitPattern: value))
                    return false
                }
            }
            slot = (slot + 1) & mask
        }
        slots[2 * slot] = meta | UInt64(UInt32(bitPattern: value))
        if key.count <= 8 {
            slots[2 * slot + 1] = prefix
        } else {
            slots[2 * slot + 1] = UInt64(keyBytes.count)
            keyBytes.append(contentsOf: key)
        }
        count += 1
        return true
    }

    /// Doubles the slots; keys are rehashed from the stored bytes.
    private mutating func grow() {
        let old = slots
        slots = [UInt64](repeating: 0, count: 2 * old.count)
        mask = old.count - 1
        count = 0
        let longKeys = keyBytes
        keyBytes = []
        for slot in 0..<(old.count / 2) where old[2 * slot] != 0 {
            let w0 = old[2 * slot]
            let length = Int(w0 >> 32 & 0xFFFF) - 1
            let value = Int32(truncatingIfNeeded: w0)
            if length <= 8 {
                var packed = old[2 * slot + 1]
                let bytes = (0..<length).map { _ -> UInt8 in
                    defer { packed >>= 8 }
                    return UInt8(packed & 0xFF)
                }
                _ = bytes.withUnsafeBufferPointer { insert($0, value: value) }
            } else {
                let start = Int(old[2 * slot + 1])
                _ = longKeys.withUnsafeBufferPointer {
                    insert(
                        UnsafeBufferPointer(rebasing: $0[start..<(start + length)]), value: value)
                }
            }
        }
    }
}

/// An open-addressing table from a pair of token ids to a merge (rank, resulting id).
struct MergeTable: Sendable {
    /// (2 × slots) key = left << 32 | right (`UInt64.max`: empty), then rank << 32 | new id.
    private var pairs: [UInt64]
    private let mask: Int
    private(set) var count = 0

    init(capacity: Int) {
        var size = 16
        while size * 4 < capacity * 5 { size <<= 1 }  // load factor at most 0.8
        pairs = [UInt64](repeating: .max, count: 2 * size)
        mask = size - 1
    }

    @inline(__always)
    private static func slot(_ key: UInt64, _ mask: Int) -> Int {
        var h = key &* 0x9E37_79B9_7F4A_7C15
        h ^= h >> 31
        return Int(truncatingIfNeeded: h) & mask
    }

    /// Later merges of the same pair replace earlier ones (Rust's `HashMap::collect`).
    mutating func insert(left: Int32, right: Int32, rank: Int32, newID: Int32) {
        precondition(count * 5 < (mask + 1) * 4, "MergeTable sized too small")
        let key = UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
        var slot = Self.slot(key, mask)
        while pairs[2 * slot] != .max && pairs[2 * slot] != key { slot = (slot + 1) & mask }
        if pairs[2 * slot] == .max { count += 1 }
        pairs[2 * slot] = key
        pairs[2 * slot + 1] =
            UInt64(UInt32(bitPattern: rank)) << 32 | UInt64(UInt32(bitPattern: newID))
    }

    /// (rank, new id) of merging `left` then `right`.
    @inline(__always)
    func lookup(_ left: Int32, _ right: Int32) -> (rank: Int32, newID: Int32)? {
        let key = UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
        return pairs.withUnsafeBufferPointer { pairs in
            var slot = Self.slot(key, mask)
            while true {
                let k = pairs[2 * slot]
                if k == key {
                    let v = pairs[2 * slot + 1]
                    return (Int32(truncatingIfNeeded: v >> 32), Int32(truncatingIfNeeded: v))
                }
                if k == .max { return nil }
                slot = (slot + 1) & mask
            }
        }
    }
}

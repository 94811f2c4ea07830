import Foundation

/// An open-addressing hash table from byte strings to token ids, built once at load.
///
/// All keys live in one contiguous buffer (`keyBytes`), so building the 200k-entry vocabulary
/// allocates a handful of arrays instead of 200k `String`s, and a lookup hashes the caller's
/// bytes in place without creating a key object.
struct ByteStringTable: Sendable {
    /// (slots) index into `entries`, or -1 for an empty slot; a power of two.
    private var slots: [Int32]
    /// (entries) where each key is in `keyBytes`, and its id.
    private var keyStart: [Int32] = []
    private var keyLength: [Int32] = []
    private var values: [Int32] = []
    private var keyBytes: [UInt8] = []
    private var mask: Int

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        slots = [Int32](repeating: -1, count: size)
        mask = size - 1
        keyStart.reserveCapacity(capacity)
        keyLength.reserveCapacity(capacity)
        values.reserveCapacity(capacity)
    }

    var count: Int { values.count }

    @inline(__always)
    static func hash(_ key: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // FNV-1a over bytes, then a final mix so that low bits are usable as the slot index.
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in key { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        h ^= h >> 29
        h = h &* 0xbf58_476d_1ce4_e5b9
        return h ^ (h >> 32)
    }

    /// The id stored for `key`, if any.
    @inline(__always)
    func lookup(_ key: UnsafeBufferPointer<UInt8>) -> Int32? {
        var slot = Int(truncatingIfNeeded: Self.hash(key)) & mask
        return slots.withUnsafeBufferPointer { slots in
            keyBytes.withUnsafeBufferPointer { bytes in
                while true {
                    let entry = Int(slots[slot])
                    if entry < 0 { return nil }
                    let length = Int(keyLength[entry])
                    if length == key.count {
                        let start = Int(keyStart[entry])
                        if length == 0
                            || memcmp(bytes.baseAddress! + start, key.baseAddress!, length) == 0
                        {
                            return values[entry]
                        }
                    }
                    slot = (slot + 1) & mask
                }
            }
        }
    }

    func lookup(_ key: [UInt8]) -> Int32? {
        key.withUnsafeBufferPointer { lookup($0) }
    }

    /// Adds `key` → `value`, or replaces the value when the key is present (a later duplicate
    /// in the vocabulary wins, as it does in a Rust `HashMap` built from the JSON object).
    mutating func insert(_ key: UnsafeBufferPointer<UInt8>, value: Int32) {
        if count * 2 >= slots.count { grow() }
        var slot = Int(truncatingIfNeeded: Self.hash(key)) & mask
        while true {
            let entry = Int(slots[slot])
            if entry < 0 { break }
            if Int(keyLength[entry]) == key.count, equalKey(entry, key) {
                values[entry] = value
                return
            }
            slot = (slot + 1) & mask
        }
        slots[slot] = Int32(values.count)
        keyStart.append(Int32(keyBytes.count))
        keyLength.append(Int32(key.count))
        keyBytes.append(contentsOf: key)
        values.append(value)
    }

    private func equalKey(_ entry: Int, _ key: UnsafeBufferPointer<UInt8>) -> Bool {
        let start = Int(keyStart[entry])
        return keyBytes.withUnsafeBufferPointer { bytes in
            key.count == 0 || memcmp(bytes.baseAddress! + start, key.baseAddress!, key.count) == 0
        }
    }

    private mutating func grow() {
        let size = slots.count * 2
        var newSlots = [Int32](repeating: -1, count: size)
        let newMask = size - 1
        keyBytes.withUnsafeBufferPointer { bytes in
            for entry in 0..<values.count {
                let key = UnsafeBufferPointer(
                    rebasing: bytes[Int(keyStart[entry])..<Int(keyStart[entry] + keyLength[entry])])
                var slot = Int(truncatingIfNeeded: Self.hash(key)) & newMask
                while newSlots[slot] >= 0 { slot = (slot + 1) & newMask }
                newSlots[slot] = Int32(entry)
            }
        }
        slots = newSlots
        mask = newMask
    }
}

/// An open-addressing table from a pair of token ids to a merge (rank, resulting id).
struct MergeTable: Sendable {
    /// (slots) key = left << 32 | right, or `UInt64.max` when empty.
    private var keys: [UInt64]
    /// (slots) rank << 32 | new id.
    private var values: [UInt64]
    private let mask: Int
    private(set) var count = 0

    init(capacity: Int) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = [UInt64](repeating: .max, count: size)
        values = [UInt64](repeating: 0, count: size)
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
        precondition(count * 2 < keys.count, "MergeTable sized too small")
        let key = UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
        var slot = Self.slot(key, mask)
        while keys[slot] != .max && keys[slot] != key { slot = (slot + 1) & mask }
        if keys[slot] == .max { count += 1 }
        keys[slot] = key
        values[slot] = UInt64(UInt32(bitPattern: rank)) << 32 | UInt64(UInt32(bitPattern: newID))
    }

    /// (rank, new id) of merging `left` then `right`.
    @inline(__always)
    func lookup(_ left: Int32, _ right: Int32) -> (rank: Int32, newID: Int32)? {
        let key = UInt64(UInt32(bitPattern: left)) << 32 | UInt64(UInt32(bitPattern: right))
        return keys.withUnsafeBufferPointer { keys in
            var slot = Self.slot(key, mask)
            while true {
                let k = keys[slot]
                if k == key {
                    let v = values[slot]
                    return (Int32(truncatingIfNeeded: v >> 32), Int32(truncatingIfNeeded: v))
                }
                if k == .max { return nil }
                slot = (slot + 1) & mask
            }
        }
    }
}

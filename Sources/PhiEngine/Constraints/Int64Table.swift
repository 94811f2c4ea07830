/// A hash map from 64-bit keys to 32-bit values, open addressing with a multiplicative
/// hash: the parse automaton's node and visited tables, looked up for every item of every
/// state it builds, where `Dictionary`'s SipHash was most of the cost of a new state.
///
/// `removeAll()` is O(1): entries carry the generation they were written in, and an entry
/// of an older generation counts as empty (it is only ever overwritten, so every live key
/// still sits before the first empty slot of its probe sequence).
struct Int64Table {
    private var keys: [Int64]
    private var values: [Int32]
    private var generations: [UInt32]
    private var generation: UInt32 = 1
    private var mask: Int
    private(set) var count = 0

    init(capacity: Int = 64) {
        var size = 16
        while size < capacity * 2 { size <<= 1 }
        keys = [Int64](repeating: 0, count: size)
        values = [Int32](repeating: 0, count: size)
        generations = [UInt32](repeating: 0, count: size)
        mask = size - 1
    }

    @inline(__always)
    private func home(_ key: Int64) -> Int {
        Int(truncatingIfNeeded: (UInt64(bitPattern: key) &* 0x9E37_79B9_7F4A_7C15) >> 32) & mask
    }

    subscript(key: Int64) -> Int32? {
        var i = home(key)
        while generations[i] == generation {
            if keys[i] == key { return values[i] }
            i = (i + 1) & mask
        }
        return nil
    }

    /// Sets `key` to `value` (a new key: callers look up first).
    mutating func insert(_ key: Int64, _ value: Int32) {
        if (count + 1) * 2 > keys.count { grow() }
        var i = home(key)
        while generations[i] == generation {
            if keys[i] == key {
                values[i] = value
                return
            }
            i = (i + 1) & mask
        }
        keys[i] = key
        values[i] = value
        generations[i] = generation
        count += 1
    }

    /// Inserts `key` (value 0) and returns whether it was new: a set.
    mutating func insertIfAbsent(_ key: Int64) -> Bool {
        if self[key] != nil { return false }
        insert(key, 0)
        return true
    }

    mutating func removeAll() {
        generation &+= 1
        count = 0
        if generation == 0 {  // wrapped: clear for real
            for i in generations.indices { generations[i] = 0 }
            generation = 1
        }
    }

    private mutating func grow() {
        let oldKeys = keys, oldValues = values, oldGenerations = generations, live = generation
        let size = keys.count * 2
        keys = [Int64](repeating: 0, count: size)
        values = [Int32](repeating: 0, count: size)
        generations = [UInt32](repeating: 0, count: size)
        mask = size - 1
        generation = 1
        count = 0
        for i in oldKeys.indices where oldGenerations[i] == live { insert(oldKeys[i], oldValues[i]) }
    }
}

import Synchronization

/// Remembers the ids of words already encoded, like the `tokenizers` BPE cache: most text
/// repeats a small set of words, and a hit skips the merge loop entirely.
///
/// Shared by all callers of one tokenizer, so it sits behind a `Mutex`; when it reaches
/// `capacity` it starts over rather than growing.
final class WordCache: Sendable {
    private struct Entry {
        var key: [UInt8]
        var ids: [Int32]
    }

    /// Words longer than this are not cached (tokenizers' `MAX_LENGTH`).
    static let maxWordLength = 256
    private let capacity: Int
    private let entries: Mutex<[UInt64: Entry]>

    init(capacity: Int = 10_000) {
        self.capacity = capacity
        entries = Mutex([:])
    }

    func lookup(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, into ids: inout [Int]) -> Bool {
        entries.withLock { entries in
            guard let entry = entries[hash], entry.key.count == word.count,
                entry.key.withUnsafeBufferPointer({ $0.elementsEqual(word) })
            else { return false }
            for id in entry.ids { ids.append(Int(id)) }
            return true
        }
    }

    func store(_ word: UnsafeBufferPointer<UInt8>, hash: UInt64, ids: ArraySlice<Int>) {
        guard word.count < Self.maxWordLength else { return }
        let entry = Entry(key: Array(word), ids: ids.map { Int32(truncatingIfNeeded: $0) })
        entries.withLock { entries in
            if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            entries[hash] = entry
        }
    }
}

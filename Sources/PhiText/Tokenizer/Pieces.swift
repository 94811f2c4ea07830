/// Text cut into the pieces the model tokenizes one by one: byte ranges of `storage`, which
/// starts as the normalized text and grows when a pre-tokenizer rewrites a piece (Metaspace,
/// ByteLevel's prefix space).
struct Pieces {
    var storage: [UInt8]
    var ranges: [Range<Int>]
    /// (ranges) whether the piece begins at offset 0 of the original input (Metaspace's
    /// `prepend_scheme: first` only prepends there).
    var atOrigin: [Bool]

    init(_ text: [UInt8], atOrigin: Bool) {
        storage = text
        ranges = text.isEmpty ? [] : [0..<text.count]
        self.atOrigin = text.isEmpty ? [] : [atOrigin]
    }

    /// Replaces every piece by the sub-ranges `split` returns for it (relative to the piece).
    mutating func split(
        _ split: (UnsafeBufferPointer<UInt8>) -> [Range<Int>]
    ) {
        var newRanges: [Range<Int>] = []
        var newOrigin: [Bool] = []
        newRanges.reserveCapacity(ranges.count * 2)
        storage.withUnsafeBufferPointer { all in
            for (range, origin) in zip(ranges, atOrigin) {
                let piece = UnsafeBufferPointer(rebasing: all[range])
                for sub in split(piece) where !sub.isEmpty {
                    newRanges.append(
                        (range.lowerBound + sub.lowerBound)..<(range.lowerBound + sub.upperBound))
                    newOrigin.append(origin && sub.lowerBound == 0)
                }
            }
        }
        ranges = newRanges
        atOrigin = newOrigin
    }

    /// Replaces piece `index` by new bytes (appended to `storage`).
    mutating func rewrite(_ index: Int, _ bytes: [UInt8]) {
        let start = storage.count
        storage.append(contentsOf: bytes)
        ranges[index] = start..<storage.count
    }

    func bytes(_ index: Int) -> ArraySlice<UInt8> { storage[ranges[index]] }
}

/// A set of byte values (256 bits): the terminal of every grammar phikit compiles. Characters
/// beyond ASCII become sequences of byte sets (see `UTF8Ranges`).
struct ByteSet: Hashable, Sendable {
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    init() {}

    init(_ byte: UInt8) { insert(byte) }

    /// The bytes `lower...upper`.
    init(_ lower: UInt8, _ upper: UInt8) {
        guard lower <= upper else { return }
        for b in lower...upper { insert(b) }
    }

    static let all: ByteSet = ByteSet(0, 255)

    func contains(_ byte: UInt8) -> Bool {
        let bit = UInt64(1) << UInt64(byte & 63)
        switch byte >> 6 {
        case 0: return words.0 & bit != 0
        case 1: return words.1 & bit != 0
        case 2: return words.2 & bit != 0
        default: return words.3 & bit != 0
        }
    }

    mutating func insert(_ byte: UInt8) {
        let bit = UInt64(1) << UInt64(byte & 63)
        switch byte >> 6 {
        case 0: words.0 |= bit
        case 1: words.1 |= bit
        case 2: words.2 |= bit
        default: words.3 |= bit
        }
    }

    mutating func formUnion(_ other: ByteSet) {
        words.0 |= other.words.0
        words.1 |= other.words.1
        words.2 |= other.words.2
        words.3 |= other.words.3
    }

    var isEmpty: Bool { words.0 | words.1 | words.2 | words.3 == 0 }

    var count: Int {
        words.0.nonzeroBitCount + words.1.nonzeroBitCount + words.2.nonzeroBitCount
            + words.3.nonzeroBitCount
    }

    static func == (a: ByteSet, b: ByteSet) -> Bool {
        a.words.0 == b.words.0 && a.words.1 == b.words.1 && a.words.2 == b.words.2
            && a.words.3 == b.words.3
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

extension ByteSet {
    /// Whether the two sets share a byte.
    func intersects(_ other: ByteSet) -> Bool {
        words.0 & other.words.0 | words.1 & other.words.1 | words.2 & other.words.2
            | words.3 & other.words.3 != 0
    }
}

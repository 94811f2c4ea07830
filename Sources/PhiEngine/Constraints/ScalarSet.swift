/// A set of Unicode scalars as sorted, disjoint ranges: the character classes of regular
/// expressions and GBNF, turned into UTF-8 byte patterns by `pattern`.
struct ScalarSet: Sendable, Equatable {
    private(set) var ranges: [ClosedRange<UInt32>] = []

    static let maxScalar: UInt32 = 0x10FFFF

    init() {}

    init(_ ranges: [ClosedRange<UInt32>]) {
        self.ranges = ranges
        normalize()
    }

    init(_ scalar: UInt32) { self.init([scalar...scalar]) }

    static let any = ScalarSet([0...maxScalar])

    var isEmpty: Bool { ranges.isEmpty }

    func contains(_ scalar: UInt32) -> Bool { ranges.contains { $0.contains(scalar) } }

    private mutating func normalize() {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [ClosedRange<UInt32>] = []
        for r in sorted {
            if let last = merged.last, r.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, r.upperBound)
            } else {
                merged.append(r)
            }
        }
        ranges = merged
    }

    func union(_ other: ScalarSet) -> ScalarSet { ScalarSet(ranges + other.ranges) }

    /// Every scalar not in the set (up to U+10FFFF).
    func inverted() -> ScalarSet {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for r in ranges {
            if r.lowerBound > next { result.append(next...(r.lowerBound - 1)) }
            next = r.upperBound &+ 1
            if r.upperBound == Self.maxScalar { return ScalarSet(result) }
        }
        result.append(next...Self.maxScalar)
        return ScalarSet(result)
    }

    func subtracting(_ other: ScalarSet) -> ScalarSet {
        ScalarSet(inverted().union(other).inverted().ranges)
    }

    /// The UTF-8 encodings of the set's scalars (surrogates excluded: they have none).
    var pattern: Pattern {
        var sequences: [Pattern] = []
        for r in ranges {
            for seq in Self.utf8Sequences(r.lowerBound, r.upperBound) {
                let parts = seq.map { Pattern.bytes(ByteSet($0.0, $0.1)) }
                sequences.append(parts.count == 1 ? parts[0] : .sequence(parts))
            }
        }
        if sequences.isEmpty { return .bytes(ByteSet()) }
        return sequences.count == 1 ? sequences[0] : .choice(sequences)
    }

    /// Splits lo...hi into ranges whose UTF-8 encodings are products of byte ranges (the
    /// algorithm of Russ Cox's RE2 and Rust's utf8-ranges).
    static func utf8Sequences(_ lo: UInt32, _ hi: UInt32) -> [[(UInt8, UInt8)]] {
        var out: [[(UInt8, UInt8)]] = []
        var stack: [(UInt32, UInt32)] = [(lo, hi)]
        outer: while let (lo, hi) = stack.popLast() {
            if lo > hi { continue }
            if lo <= 0xDFFF && hi >= 0xD800 {  // no surrogates
                if lo < 0xD800 { stack.append((lo, 0xD7FF)) }
                if hi > 0xDFFF { stack.append((0xE000, hi)) }
                continue
            }
            if hi <= 0x7F {
                out.append([(UInt8(lo), UInt8(hi))])
                continue
            }
            for boundary: UInt32 in [0x7F, 0x7FF, 0xFFFF] where lo <= boundary && boundary < hi {
                stack.append((boundary + 1, hi))
                stack.append((lo, boundary))
                continue outer
            }
            for i: UInt32 in 1..<4 {
                let m: UInt32 = (1 << (6 * i)) - 1
                if lo & ~m != hi & ~m {
                    if lo & m != 0 {
                        stack.append(((lo | m) + 1, hi))
                        stack.append((lo, lo | m))
                        continue outer
                    }
                    if hi & m != m {
                        stack.append((hi & ~m, hi))
                        stack.append((lo, (hi & ~m) - 1))
                        continue outer
                    }
                }
            }
            let a = encode(lo), b = encode(hi)
            out.append(zip(a, b).map { ($0, $1) })
        }
        return out
    }

    static func encode(_ scalar: UInt32) -> [UInt8] {
        Array(String(Character(Unicode.Scalar(scalar)!)).utf8)
    }
}

/// Tokens grouped by a length (characters or bytes), ready as bit masks: "every token of the
/// group no longer than k" is a copy of a precomputed mask (plus the few long tokens), which
/// is what a counted repetition (`maxLength`, `[a-z]{0,39}`) allows while k repetitions are
/// left. Built once per vocabulary.
struct LengthSlice: Sendable {
    /// tokensUpTo[k - 1]: the group's tokens of length at most k, for k up to `cumulative`.
    private let tokensUpTo: [[UInt64]]
    /// The tokens longer than `cumulative`, sorted by length.
    private let longer: [(length: Int32, token: Int32)]
    /// countOfLength[k]: how many tokens of the group are k long.
    let countOfLength: [Int]
    let all: [UInt64]
    let count: Int

    /// Cumulative masks kept: about 25 KB each at 200k tokens, and longer tokens are rare.
    static let cumulative = 16

    /// `members` holds each token of the group with its length (at least 1).
    init(vocabularySize: Int, members: [(token: Int, length: Int)]) {
        let words = (vocabularySize + 63) / 64
        let longest = members.map(\.length).max() ?? 0
        var counts = [Int](repeating: 0, count: longest + 1)
        for m in members { counts[m.length] += 1 }
        countOfLength = counts
        count = members.count
        var upTo: [[UInt64]] = []
        var mask = [UInt64](repeating: 0, count: words)
        let byLength = members.sorted { $0.length < $1.length }
        var next = 0
        for k in 1...max(1, min(longest, Self.cumulative)) {
            while next < byLength.count && byLength[next].length <= k {
                let t = byLength[next].token
                mask[t >> 6] |= 1 << UInt64(t & 63)
                next += 1
            }
            upTo.append(mask)
        }
        tokensUpTo = upTo
        longer = byLength[next...].map { (Int32($0.length), Int32($0.token)) }
        for m in longer { mask[Int(m.token) >> 6] |= 1 << UInt64(m.token & 63) }
        all = mask
    }

    var longest: Int { countOfLength.count - 1 }

    /// The tokens of length at most `k` (k ≥ 1), as bits, and how many.
    func tokens(upTo k: Int) -> (words: [UInt64], count: Int) {
        if k >= longest { return (all, count) }
        var words = tokensUpTo[min(k, Self.cumulative) - 1]
        for m in longer {
            guard m.length <= k else { break }
            words[Int(m.token) >> 6] |= 1 << UInt64(m.token & 63)
        }
        return (words, countOfLength[1...k].reduce(0, +))
    }
}

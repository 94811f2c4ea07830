/// The parsed form of a split/replace pattern: the subset of Oniguruma syntax that
/// tokenizer.json files use (see `RegexParser`). Matched by `BacktrackingMatcher`.
indirect enum RegexNode: Sendable {
    /// One scalar from a set.
    case set(ScalarSet)
    case sequence([RegexNode])
    /// Alternatives, tried in order (leftmost-first, as Oniguruma does).
    case alternation([RegexNode])
    /// `max == Int.max` means unbounded.
    case repetition(RegexNode, min: Int, max: Int, mode: RepetitionMode)
    case lookahead(RegexNode, negative: Bool)
    case atomic(RegexNode)
    case textStart
    case textEnd
    /// `$`: end of text or before a newline.
    case lineEnd
    /// `^`: start of text or after a newline.
    case lineStart

    enum RepetitionMode: Sendable { case greedy, lazy, possessive }
}

/// A set of scalars: listed scalars and ranges, general-category masks, White_Space, word
/// characters; optionally negated.
struct ScalarSet: Sendable {
    enum Item: Sendable {
        case scalar(UInt32)
        case range(UInt32, UInt32)
        /// Mask over `ScalarCategory` indices; `negated` for `\P{…}`.
        case categories(UInt32, negated: Bool)
        case whitespace(negated: Bool)
        /// `\w` as Oniguruma defines it, or with `joinControl` also ZWNJ/ZWJ (Rust's regex).
        case word(negated: Bool, joinControl: Bool)
        case set(ScalarSet)
    }

    var items: [Item] = []
    var negated = false

    static func single(_ value: UInt32) -> ScalarSet { ScalarSet(items: [.scalar(value)]) }

    func contains(_ value: UInt32, _ packed: UInt8) -> Bool {
        var found = false
        for item in items {
            switch item {
            case .scalar(let s): found = s == value
            case .range(let lo, let hi): found = lo <= value && value <= hi
            case .categories(let mask, let negated): found = scalarIs(packed, mask) != negated
            case .whitespace(let negated): found = scalarIsWhitespace(packed) != negated
            case .word(let negated, let joinControl):
                let isWord =
                    scalarIsWord(packed) || (joinControl && (value == 0x200C || value == 0x200D))
                found = isWord != negated
            case .set(let inner): found = inner.contains(value, packed)
            }
            if found { break }
        }
        return found != negated
    }
}

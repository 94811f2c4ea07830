/// What the compilers (JSON Schema, regular expressions, GBNF) build: a tree over byte sets
/// and references to named rules, lowered by `GrammarBuilder` into the flat `Grammar` the
/// matcher runs.
indirect enum Pattern: Sendable {
    case bytes(ByteSet)
    case sequence([Pattern])
    case choice([Pattern])
    case rule(Int)
    /// `min` to `max` (nil: unbounded) copies of the pattern.
    case repetition(Pattern, min: Int, max: Int?)

    static let empty = Pattern.sequence([])

    /// The bytes of `text` in order.
    static func literal(_ text: String) -> Pattern { literal(Array(text.utf8)) }

    static func literal(_ bytes: [UInt8]) -> Pattern {
        bytes.count == 1 ? .bytes(ByteSet(bytes[0])) : .sequence(bytes.map { .bytes(ByteSet($0)) })
    }

    static func optional(_ p: Pattern) -> Pattern { .repetition(p, min: 0, max: 1) }
    static func star(_ p: Pattern) -> Pattern { .repetition(p, min: 0, max: nil) }
    static func plus(_ p: Pattern) -> Pattern { .repetition(p, min: 1, max: nil) }
}

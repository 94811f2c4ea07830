/// Parses the regular expressions found in tokenizer.json (`Split` and `Replace` patterns)
/// into a `RegexNode`, following Oniguruma's syntax as the `tokenizers` library compiles them.
///
/// Supported: literals and escapes (`\r \n \t \f \v \e \0 \xHH \x{H…} \uHHHH`, escaped
/// punctuation), `.`, classes `[…]` with ranges, negation and nested escapes, `\s \S \d \D
/// \w \W \h \H`, `\p{…}`/`\P{…}`/`\p{^…}` for general categories, groups `(…)`, `(?:…)`,
/// `(?i:…)`, `(?i)`, `(?-i)`, look-ahead `(?=…)`/`(?!…)`, atomic `(?>…)`, quantifiers `? * +
/// {m} {m,} {m,n}` with lazy `?` and possessive `+` forms, anchors `^ $ \A \z \Z`. Anything else
/// (back-references, look-behind, `\b`, named groups, unknown properties) throws, so an
/// unsupported pattern is an error rather than a silently different split.
struct RegexParser {
    struct Unsupported: Error {
        var reason: String
    }

    private let scalars: [UInt32]
    private var position = 0
    private var caseInsensitive = false
    /// Rust's `regex` crate counts Join_Control in `\w`; Oniguruma does not.
    private let rustWord: Bool

    init(_ pattern: String, rustWord: Bool) {
        scalars = pattern.unicodeScalars.map(\.value)
        self.rustWord = rustWord
    }

    /// Parses an Oniguruma pattern, or (`rustWord`) one tokenizers compiles with Rust's regex.
    static func parse(_ pattern: String, rustWord: Bool = false) throws(Unsupported) -> RegexNode {
        var parser = RegexParser(pattern, rustWord: rustWord)
        let node = try parser.parseAlternation()
        guard parser.position == parser.scalars.count else {
            throw Unsupported(reason: "unbalanced ')' at character \(parser.position)")
        }
        return node
    }

    private var atEnd: Bool { position >= scalars.count }
    private func peek(_ offset: Int = 0) -> UInt32? {
        position + offset < scalars.count ? scalars[position + offset] : nil
    }
    private mutating func take() -> UInt32 {
        defer { position += 1 }
        return scalars[position]
    }
    private mutating func eat(_ ascii: Character) -> Bool {
        guard peek() == ascii.unicodeScalars.first!.value else { return false }
        position += 1
        return true
    }

    private mutating func parseAlternation() throws(Unsupported) -> RegexNode {
        let savedFlag = caseInsensitive
        defer { caseInsensitive = savedFlag }
        var branches = [try parseSequence()]
        while eat("|") { branches.append(try parseSequence()) }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    private mutating func parseSequence() throws(Unsupported) -> RegexNode {
        var items: [RegexNode] = []
        while let c = peek(), c != 0x7C /* | */, c != 0x29 /* ) */ {
            guard let atom = try parseAtom() else { continue }
            items.append(try parseQuantifiers(atom))
        }
        return items.count == 1 ? items[0] : .sequence(items)
    }

    private mutating func parseQuantifiers(_ atom: RegexNode) throws(Unsupported) -> RegexNode {
        var node = atom
        while let c = peek() {
            var bounds: (Int, Int)
            switch c {
            case 0x3F: bounds = (0, 1)  // ?
            case 0x2A: bounds = (0, Int.max)  // *
            case 0x2B: bounds = (1, Int.max)  // +
            case 0x7B:  // {, consumed through '}' by parseBraces
                guard let parsed = parseBraces() else { return node }  // a literal '{'
                bounds = parsed
            default: return node
            }
            if c != 0x7B { position += 1 }
            var mode = RegexNode.RepetitionMode.greedy
            if eat("?") {
                mode = .lazy
            } else if c != 0x7B, eat("+") {
                mode = .possessive
            }
            node = .repetition(node, min: bounds.0, max: bounds.1, mode: mode)
        }
        return node
    }

    /// `{m}`, `{m,}`, `{m,n}` (and Oniguruma's `{,n}`); nil when the brace is a literal.
    private mutating func parseBraces() -> (Int, Int)? {
        let start = position
        position += 1
        func number() -> Int? {
            var value: Int?
            while let c = peek(), c >= 0x30, c <= 0x39 {
                value = (value ?? 0) * 10 + Int(c - 0x30)
                if value! > 100_000 { return nil }
                position += 1
            }
            return value
        }
        let low = number()
        var high = low
        if eat(",") { high = number() ?? Int.max }
        guard eat("}"), low != nil || high != nil, (low ?? 0) <= (high ?? 0) else {
            position = start
            return nil
        }
        return (low ?? 0, high!)
    }

    private mutating func parseAtom() throws(Unsupported) -> RegexNode? {
        let c = take()
        switch c {
        case 0x28: return try parseGroup()  // (
        case 0x5B: return .set(try parseClass())  // [
        case 0x2E: return .set(ScalarSet(items: [.scalar(0x0A)], negated: true))  // .
        case 0x5E: return .lineStart
        case 0x24: return .lineEnd
        case 0x5C: return try parseEscape()
        case 0x2A, 0x2B, 0x3F: throw Unsupported(reason: "quantifier without a target")
        default: return literal(c)
        }
    }

    private mutating func parseGroup() throws(Unsupported) -> RegexNode? {
        var kind = "capture"
        if eat("?") {
            if eat(":") {
                kind = "group"
            } else if eat("=") {
                kind = "ahead"
            } else if eat("!") {
                kind = "not-ahead"
            } else if eat(">") {
                kind = "atomic"
            } else {
                // Flags: (?i) (?-i) (?i:…) (?i-x:…)
                var on = true
                var newFlag = caseInsensitive
                while let f = peek(), f != 0x3A, f != 0x29 {
                    switch take() {
                    case 0x2D: on = false
                    case 0x69: newFlag = on
                    case 0x78, 0x6D, 0x73: break  // x, m, s: no effect on these patterns
                    default:
                        throw Unsupported(reason: "group syntax '(?\(Self.text(f))' at \(position)")
                    }
                }
                if eat(")") {
                    caseInsensitive = newFlag  // scoped to the enclosing group
                    return nil
                }
                _ = eat(":")
                let saved = caseInsensitive
                caseInsensitive = newFlag
                let inner = try parseAlternation()
                caseInsensitive = saved
                guard eat(")") else { throw Unsupported(reason: "missing ')'") }
                return inner
            }
        }
        let inner = try parseAlternation()
        guard eat(")") else { throw Unsupported(reason: "missing ')'") }
        switch kind {
        case "ahead": return .lookahead(inner, negative: false)
        case "not-ahead": return .lookahead(inner, negative: true)
        case "atomic": return .atomic(inner)
        default: return inner
        }
    }

    private mutating func parseEscape() throws(Unsupported) -> RegexNode {
        guard !atEnd else { throw Unsupported(reason: "pattern ends with '\\'") }
        switch peek()! {
        case 0x41:
            position += 1
            return .textStart  // \A
        case 0x7A, 0x5A:
            position += 1
            return .textEnd  // \z, \Z (close enough: no \n-at-end use)
        default:
            let item = try parseEscapedItem()
            if case .scalar(let v) = item { return literal(v) }
            return .set(ScalarSet(items: [item]))
        }
    }

    /// After a backslash, inside or outside a class.
    private mutating func parseEscapedItem() throws(Unsupported) -> ScalarSet.Item {
        // `[^\` or `[a-\` at the very end (found by the regex fuzzer: it read past the end).
        guard !atEnd else { throw Unsupported(reason: "pattern ends with '\\'") }
        let c = take()
        switch c {
        case 0x73: return .whitespace(negated: false)  // s
        case 0x53: return .whitespace(negated: true)
        case 0x64: return .categories(ScalarCategory.decimal, negated: false)  // d
        case 0x44: return .categories(ScalarCategory.decimal, negated: true)
        case 0x77: return .word(negated: false, joinControl: rustWord)  // w
        case 0x57: return .word(negated: true, joinControl: rustWord)
        case 0x68: return .set(ScalarSet(items: [.scalar(0x09), .scalar(0x20)]))  // h
        case 0x48: return .set(ScalarSet(items: [.scalar(0x09), .scalar(0x20)], negated: true))
        case 0x70, 0x50: return try parseProperty(negated: c == 0x50)  // p, P
        case 0x72: return .scalar(0x0D)
        case 0x6E: return .scalar(0x0A)
        case 0x74: return .scalar(0x09)
        case 0x66: return .scalar(0x0C)
        case 0x76: return .scalar(0x0B)
        case 0x65: return .scalar(0x1B)
        case 0x30: return .scalar(0)
        case 0x78: return .scalar(try parseHex(braced: eat("{"), digits: 2))  // x
        case 0x75: return .scalar(try parseHex(braced: false, digits: 4))  // u
        default:
            let isAlnum =
                (0x30...0x39).contains(c) || (0x41...0x5A).contains(c)
                || (0x61...0x7A).contains(c)
            if isAlnum {
                throw Unsupported(reason: "escape '\\\(Self.text(c))'")
            }
            return .scalar(c)
        }
    }

    private mutating func parseHex(braced: Bool, digits: Int) throws(Unsupported) -> UInt32 {
        var value: UInt32 = 0
        var count = 0
        while let c = peek(), let d = asciiHexValue(c).map(UInt32.init), braced || count < digits {
            value = value &* 16 &+ d
            count += 1
            position += 1
            if count > 8 { break }
        }
        if braced, !eat("}") { throw Unsupported(reason: "bad \\x{…} escape") }
        guard count > 0, braced || count == digits, Unicode.Scalar(value) != nil else {
            throw Unsupported(reason: "bad hexadecimal escape")
        }
        return value
    }

    private mutating func parseProperty(negated: Bool) throws(Unsupported) -> ScalarSet.Item {
        var negated = negated
        var name = ""
        if eat("{") {
            if eat("^") { negated.toggle() }
            while let c = peek(), c != 0x7D {
                name.unicodeScalars.append(Unicode.Scalar(take())!)
            }
            guard eat("}") else { throw Unsupported(reason: "unterminated \\p{") }
        } else if !atEnd {
            name = Self.text(take())
        }
        guard let mask = ScalarCategory.mask(ofCategory: name) else {
            throw Unsupported(reason: "Unicode property '\(name)'")
        }
        return .categories(mask, negated: negated)
    }

    private mutating func parseClass() throws(Unsupported) -> ScalarSet {
        var set = ScalarSet()
        if eat("^") { set.negated = true }
        var first = true
        while true {
            guard let c = peek() else { throw Unsupported(reason: "unterminated '['") }
            if c == 0x5D, !first {  // ]
                position += 1
                return set
            }
            first = false
            position += 1
            var item: ScalarSet.Item
            if c == 0x5B {  // nested class
                if peek() == 0x3A { throw Unsupported(reason: "POSIX bracket class") }
                item = .set(try parseClass())
            } else if c == 0x5C {
                item = try parseEscapedItem()
            } else {
                item = .scalar(c)
            }
            // A range a-b (a '-' before ']' is a literal).
            if case .scalar(let low) = item, peek() == 0x2D, let next = peek(1), next != 0x5D {
                position += 1
                var highItem: ScalarSet.Item = .scalar(take())
                if next == 0x5C { highItem = try parseEscapedItem() }
                guard case .scalar(let high) = highItem, low <= high else {
                    throw Unsupported(reason: "bad range in class")
                }
                item = .range(low, high)
            }
            if caseInsensitive { item = Self.foldingItem(item) }
            set.items.append(item)
        }
    }

    private func literal(_ value: UInt32) -> RegexNode {
        guard caseInsensitive else { return .set(.single(value)) }
        return .set(ScalarSet(items: [Self.foldingItem(.scalar(value))]))
    }

    /// Under `(?i)`, a literal matches every scalar with the same case folding (`s` also
    /// matches `S` and `ſ`, as in Oniguruma).
    private static func foldingItem(_ item: ScalarSet.Item) -> ScalarSet.Item {
        if case .range(let low, let high) = item, high - low < 1024 {
            // [a-z] under (?i): the range plus every scalar's case variants.
            let variants = (low...high).map { foldingItem(.scalar($0)) }
            return .set(ScalarSet(items: [item] + variants))
        }
        guard case .scalar(let v) = item, let scalar = Unicode.Scalar(v) else { return item }
        var variants: [UInt32] = [v]
        let p = scalar.properties
        for mapped in [p.lowercaseMapping, p.uppercaseMapping, p.titlecaseMapping] {
            let s = mapped.unicodeScalars
            if s.count == 1, let only = s.first, !variants.contains(only.value) {
                variants.append(only.value)
            }
        }
        let extra: [UInt32: [UInt32]] = [
            0x73: [0x17F], 0x53: [0x17F], 0x17F: [0x73, 0x53], 0x6B: [0x212A], 0x4B: [0x212A],
            0x212A: [0x6B, 0x4B], 0xE5: [0x212B], 0xC5: [0x212B],
        ]
        for e in extra[v] ?? [] where !variants.contains(e) { variants.append(e) }
        return variants.count == 1 ? item : .set(ScalarSet(items: variants.map { .scalar($0) }))
    }

    private static func text(_ value: UInt32) -> String {
        Unicode.Scalar(value).map { String(Character($0)) } ?? "?"
    }
}

/// Regular expressions (the anchored subset of Python's `re` and ECMA-262 phikit enforces)
/// compiled to grammar patterns. The whole pattern must match: `^` and `$` are accepted at the
/// ends and change nothing. `\d`, `\w` and `\s` are ASCII, as in ECMA-262 (JSON Schema's
/// dialect). Backreferences, lookaround, word boundaries and inline flags cannot be enforced
/// by a grammar (or are not implemented) and are errors naming the construct.
struct RegexCompiler {
    /// How matched characters are written: as UTF-8 text, or inside a JSON string literal
    /// (where `"`, `\` and control characters are escaped).
    enum Encoding {
        case text
        case jsonString
    }

    /// The most copies a `{n,m}` bound may ask for.
    static let maxRepetition = 10_000

    private let scalars: [UInt32]
    private var i = 0
    private let encoding: Encoding
    private let source: String

    /// A grammar accepting exactly the strings `regex` matches as a whole.
    static func grammar(_ regex: String) throws(ConstraintError) -> Grammar {
        var builder = GrammarBuilder(what: "regular expression")
        let root = builder.addRule("root")
        builder.define(root, try pattern(regex, encoding: .text))
        return try builder.build(root: root)
    }

    static func pattern(_ regex: String, encoding: Encoding) throws(ConstraintError) -> Pattern {
        var compiler = RegexCompiler(regex, encoding: encoding)
        return try compiler.parseWhole()
    }

    private init(_ regex: String, encoding: Encoding) {
        scalars = regex.unicodeScalars.map(\.value)
        self.encoding = encoding
        source = regex
    }

    private func fail(_ problem: String, construct: String? = nil) -> ConstraintError {
        ConstraintError(
            "regular expression '\(source)': \(problem)"
                + (construct == nil ? "" : " (not supported)"),
            hint: construct == nil ? nil : "phikit enforces the subset in docs/structured-output.md",
            unsupported: construct)
    }

    private var peek: UInt32? { i < scalars.count ? scalars[i] : nil }

    private mutating func eat(_ c: Character) -> Bool {
        if peek == c.unicodeScalars.first!.value {
            i += 1
            return true
        }
        return false
    }

    private mutating func parseWhole() throws(ConstraintError) -> Pattern {
        let p = try parseAlternation(depth: 0)
        if i < scalars.count { throw fail("unbalanced ')' at character \(i + 1)") }
        return p
    }

    private mutating func parseAlternation(depth: Int) throws(ConstraintError) -> Pattern {
        if depth > 200 { throw fail("groups nested more than 200 deep") }
        var options = [try parseConcatenation(depth: depth)]
        while eat("|") { options.append(try parseConcatenation(depth: depth)) }
        return options.count == 1 ? options[0] : .choice(options)
    }

    private mutating func parseConcatenation(depth: Int) throws(ConstraintError) -> Pattern {
        var parts: [Pattern] = []
        let branchStart = i
        while let c = peek, c != 0x7C /* | */, c != 0x29 /* ) */ {
            if c == 0x5E /* ^ */ {
                guard depth == 0 && i == branchStart else {
                    throw fail("'^' inside the pattern", construct: "^ (not at the start)")
                }
                i += 1
                continue
            }
            if c == 0x24 /* $ */ {
                i += 1
                guard depth == 0 && (peek == nil || peek == 0x7C) else {
                    throw fail("'$' inside the pattern", construct: "$ (not at the end)")
                }
                continue
            }
            let atom = try parseAtom(depth: depth)
            parts.append(try parseQuantifiers(atom))
        }
        return parts.count == 1 ? parts[0] : .sequence(parts)
    }

    private mutating func parseQuantifiers(_ atom: Pattern) throws(ConstraintError) -> Pattern {
        var p = atom
        while let c = peek {
            var bounds: (Int, Int?)
            switch c {
            case 0x2A: bounds = (0, nil)  // *
            case 0x2B: bounds = (1, nil)  // +
            case 0x3F: bounds = (0, 1)  // ?
            case 0x7B:  // {
                guard let b = try parseBraces() else { return p }
                bounds = b
                i -= 1  // parseBraces consumed through '}'; the common +1 below
            default: return p
            }
            i += 1
            if eat("?") {}  // lazy: the same language
            if peek == 0x2B { throw fail("possessive quantifier", construct: "possessive quantifier") }
            p = .repetition(p, min: bounds.0, max: bounds.1)
        }
        return p
    }

    /// `{n}`, `{n,}`, `{n,m}`, `{,m}` — or nil (and nothing consumed) when the brace is a
    /// literal, as Python reads `{` not followed by a bound.
    private mutating func parseBraces() throws(ConstraintError) -> (Int, Int?)? {
        let start = i
        i += 1
        let low = ScalarReading.decimal(scalars, &i)
        var high: Int? = low
        if eat(",") { high = ScalarReading.decimal(scalars, &i) }
        guard eat("}"), low != nil || high != nil || scalars[i - 2] == 0x2C else {
            i = start
            return nil
        }
        let lower = low ?? 0
        if let high, high < lower { throw fail("bad repetition bounds {\(lower),\(high)}") }
        if max(lower, high ?? 0) > Self.maxRepetition {
            throw fail("repetition bound over \(Self.maxRepetition)")
        }
        return (lower, high)
    }

    private mutating func parseAtom(depth: Int) throws(ConstraintError) -> Pattern {
        let c = scalars[i]
        i += 1
        switch c {
        case 0x28:  // (
            if eat("?") {
                if eat(":") {
                } else if eat("P") || peek == 0x3C /* < */ {
                    if peek == 0x3D /* = */ {  // (?P=name)
                        throw fail("backreference (?P=…)", construct: "backreference")
                    }
                    guard eat("<") else { throw fail("bad group syntax") }
                    if peek == 0x3D || peek == 0x21 {
                        throw fail("lookbehind", construct: "lookbehind")
                    }
                    while let n = peek, n != 0x3E { i += 1 }
                    guard eat(">") else { throw fail("unterminated group name") }
                } else if peek == 0x3D || peek == 0x21 {
                    throw fail("lookahead", construct: "lookahead")
                } else {
                    throw fail("inline flags or group extension '(?'", construct: "(?…)")
                }
            }
            let inner = try parseAlternation(depth: depth + 1)
            guard eat(")") else { throw fail("missing ')'") }
            return inner
        case 0x5B: return try encode(parseClass())  // [
        case 0x2E: return encode(ScalarSet([0...9, 11...ScalarSet.maxScalar]))  // . (not \n)
        case 0x5C: return try parseEscape()  // backslash
        case 0x2A, 0x2B, 0x3F: throw fail("nothing to repeat at character \(i)")
        case 0x29: throw fail("unbalanced ')'")
        default: return encode(ScalarSet(c))
        }
    }

    private mutating func parseEscape() throws(ConstraintError) -> Pattern {
        guard let c = peek else { throw fail("trailing backslash") }
        if let set = try classEscape() { return encode(set) }
        i += 1
        switch c {
        case 0x31...0x39: throw fail("backreference \\\(Character(Unicode.Scalar(c)!))", construct: "backreference")
        case 0x6B: throw fail("backreference \\k", construct: "backreference")
        case 0x62, 0x42, 0x41, 0x5A, 0x7A, 0x47:  // b B A Z z G
            throw fail("anchor or word boundary \\\(Character(Unicode.Scalar(c)!))",
                construct: "\\\(Character(Unicode.Scalar(c)!))")
        default:
            i -= 1
            return encode(ScalarSet(try escapedScalar()))
        }
    }

    /// `\d \D \w \W \s \S` (ASCII), or nil if the escape is not a class.
    private mutating func classEscape() throws(ConstraintError) -> ScalarSet? {
        let digit = ScalarSet([0x30...0x39])
        let word = ScalarSet([0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A])
        let space = ScalarSet([0x09...0x0D, 0x20...0x20])
        let set: ScalarSet
        switch peek {
        case 0x64: set = digit
        case 0x44: set = digit.inverted()
        case 0x77: set = word
        case 0x57: set = word.inverted()
        case 0x73: set = space
        case 0x53: set = space.inverted()
        default: return nil
        }
        i += 1
        return set
    }

    /// The scalar of a one-character escape (after the backslash).
    private mutating func escapedScalar() throws(ConstraintError) -> UInt32 {
        guard let c = peek else { throw fail("trailing backslash") }
        i += 1
        switch c {
        case 0x6E: return 0x0A  // n
        case 0x74: return 0x09  // t
        case 0x72: return 0x0D  // r
        case 0x66: return 0x0C  // f
        case 0x76: return 0x0B  // v
        case 0x30: return 0  // 0
        case 0x61: return 0x07  // a
        case 0x78: return try hex(2)  // x
        case 0x75: return try hex(4)  // u
        case 0x55: return try hex(8)  // U
        default:
            let isLetterOrDigit =
                (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
            if isLetterOrDigit {
                throw fail("unknown escape \\\(Character(Unicode.Scalar(c)!))",
                    construct: "\\\(Character(Unicode.Scalar(c)!))")
            }
            return c  // an escaped punctuation character stands for itself
        }
    }

    private mutating func hex(_ digits: Int) throws(ConstraintError) -> UInt32 {
        switch ScalarReading.hexScalar(scalars, &i, digits: digits) {
        case .success(let value): return value
        case .failure(let problem): throw fail(problem.message)
        }
    }

    /// `[...]` after its `[`.
    private mutating func parseClass() throws(ConstraintError) -> ScalarSet {
        let negated = eat("^")
        var set = ScalarSet()
        var first = true
        while true {
            guard let c = peek else { throw fail("missing ']'") }
            if c == 0x5D && !first {  // ]
                i += 1
                break
            }
            first = false
            var low: UInt32
            if c == 0x5C {
                i += 1
                if let s = try classEscape() {
                    set = set.union(s)
                    continue
                }
                if peek == 0x62 {  // \b in a class is a backspace
                    i += 1
                    low = 0x08
                } else {
                    low = try escapedScalar()
                }
            } else if c == 0x5B && i + 1 < scalars.count && scalars[i + 1] == 0x3A {
                throw fail("POSIX class [:…:]", construct: "[:class:]")
            } else {
                low = c
                i += 1
            }
            if peek == 0x2D, i + 1 < scalars.count, scalars[i + 1] != 0x5D {  // a-b
                i += 1
                var high: UInt32
                if peek == 0x5C {
                    i += 1
                    if try classEscape() != nil { throw fail("bad class range") }
                    high = try escapedScalar()
                } else {
                    high = scalars[i]
                    i += 1
                }
                guard low <= high else { throw fail("bad class range") }
                set = set.union(ScalarSet([low...high]))
            } else {
                set = set.union(ScalarSet(low))
            }
        }
        return negated ? set.inverted() : set
    }

    private func encode(_ set: ScalarSet) -> Pattern {
        switch encoding {
        case .text: return set.pattern
        case .jsonString: return Self.jsonStringPattern(set)
        }
    }

    /// A set of characters as they are written in a JSON string: most as themselves, `"`
    /// and `\` and control characters escaped.
    static func jsonStringPattern(_ set: ScalarSet) -> Pattern {
        let special = ScalarSet([0...0x1F, 0x22...0x22, 0x5C...0x5C])
        var options: [Pattern] = []
        let plain = set.subtracting(special)
        if !plain.isEmpty { options.append(plain.pattern) }
        let short: [UInt32: String] = [
            0x22: "\\\"", 0x5C: "\\\\", 0x0A: "\\n", 0x09: "\\t", 0x0D: "\\r", 0x08: "\\b",
            0x0C: "\\f",
        ]
        for c in special.ranges.flatMap({ Array($0) }) where set.contains(c) {
            let hex = String(c, radix: 16)
            let escape = short[c] ?? "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            options.append(.literal(escape))
        }
        if options.isEmpty { return .bytes(ByteSet()) }
        return options.count == 1 ? options[0] : .choice(options)
    }
}

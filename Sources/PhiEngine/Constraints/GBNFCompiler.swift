/// llama.cpp's grammar format (GBNF) compiled to a grammar: `name ::= body` rules, `root`
/// the start; bodies of "literals", [classes] (with ^, ranges, escapes), `.`, rule names,
/// groups, `|`, and the postfix `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`; `#` comments. A rule
/// ends where the next `name ::=` begins, so bodies may span lines. Token references
/// (`<[id]>`) are refused by name.
struct GBNFCompiler {
    private let scalars: [UInt32]
    private var i = 0
    private var builder = GrammarBuilder(what: "grammar")
    private var ruleIDs: [String: Int] = [:]

    static func grammar(_ text: String) throws(ConstraintError) -> Grammar {
        var compiler = GBNFCompiler(text)
        return try compiler.parseGrammar()
    }

    private init(_ text: String) { scalars = text.unicodeScalars.map(\.value) }

    private func fail(_ problem: String, construct: String? = nil) -> ConstraintError {
        let line = scalars[..<min(i, scalars.count)].filter { $0 == 0x0A }.count + 1
        return ConstraintError(
            "grammar line \(line): \(problem)",
            hint: construct == nil ? nil : "phikit enforces the GBNF subset in docs/structured-output.md",
            unsupported: construct)
    }

    private var peek: UInt32? { i < scalars.count ? scalars[i] : nil }

    private static func isNameScalar(_ c: UInt32) -> Bool {
        (0x30...0x39).contains(c) || (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c)
            || c == 0x2D || c == 0x5F
    }

    private mutating func skipSpace() {
        while let c = peek {
            if c == 0x23 {  // # comment
                while let d = peek, d != 0x0A { i += 1 }
            } else if c == 0x20 || c == 0x09 || c == 0x0A || c == 0x0D {
                i += 1
            } else {
                return
            }
        }
    }

    private mutating func name() -> String? {
        let start = i
        while let c = peek, Self.isNameScalar(c) { i += 1 }
        guard i > start else { return nil }
        return String(String.UnicodeScalarView(scalars[start..<i].map { Unicode.Scalar($0)! }))
    }

    /// Whether a `name ::=` starts at the current position (the end of the previous rule).
    private func atRuleStart() -> Bool {
        var j = i
        while j < scalars.count, Self.isNameScalar(scalars[j]) { j += 1 }
        guard j > i else { return false }
        while j < scalars.count, scalars[j] == 0x20 || scalars[j] == 0x09 { j += 1 }
        return j + 2 < scalars.count && scalars[j] == 0x3A && scalars[j + 1] == 0x3A
            && scalars[j + 2] == 0x3D
    }

    private mutating func rule(_ name: String) -> Int {
        if let id = ruleIDs[name] { return id }
        let id = builder.addRule(name)
        ruleIDs[name] = id
        return id
    }

    private mutating func parseGrammar() throws(ConstraintError) -> Grammar {
        skipSpace()
        while i < scalars.count {
            guard let name = name() else { throw fail("expected a rule name") }
            skipSpace()
            guard peek == 0x3A, i + 2 < scalars.count, scalars[i + 1] == 0x3A,
                scalars[i + 2] == 0x3D
            else { throw fail("expected '::=' after '\(name)'") }
            i += 3
            let id = rule(name)
            if builder.isDefined(id) { throw fail("rule '\(name)' is defined twice") }
            builder.define(id, try parseAlternatives(depth: 0))
            skipSpace()
        }
        guard let root = ruleIDs["root"], builder.isDefined(root) else {
            throw ConstraintError("the grammar has no 'root' rule", hint: "start it with root ::= …")
        }
        return try builder.build(root: root)
    }

    private mutating func parseAlternatives(depth: Int) throws(ConstraintError) -> Pattern {
        if depth > 200 { throw fail("groups nested more than 200 deep") }
        var options = [try parseSequence(depth: depth)]
        while peek == 0x7C {
            i += 1
            options.append(try parseSequence(depth: depth))
        }
        return options.count == 1 ? options[0] : .choice(options)
    }

    private mutating func parseSequence(depth: Int) throws(ConstraintError) -> Pattern {
        var parts: [Pattern] = []
        while true {
            skipSpace()
            guard let c = peek, c != 0x7C, c != 0x29 else { break }
            if depth == 0 && atRuleStart() { break }
            var atom: Pattern
            switch c {
            case 0x22:  // "literal"
                i += 1
                var bytes: [UInt8] = []
                while true {
                    guard let d = peek else { throw fail("unterminated string") }
                    if d == 0x22 { i += 1; break }
                    let scalar = try character()
                    bytes += ScalarSet.encode(scalar)
                }
                atom = .literal(bytes)
            case 0x5B:  // [class]
                i += 1
                atom = try parseClass().pattern
            case 0x2E:  // .
                i += 1
                atom = ScalarSet.any.pattern
            case 0x28:  // (
                i += 1
                atom = try parseAlternatives(depth: depth + 1)
                skipSpace()
                guard peek == 0x29 else { throw fail("missing ')'") }
                i += 1
            case 0x3C:  // <token>
                throw fail("token references <…>", construct: "<token>")
            default:
                guard let ref = name() else {
                    throw fail("unexpected '\(Character(Unicode.Scalar(c)!))'")
                }
                atom = .rule(rule(ref))
            }
            parts.append(try parseQuantifiers(atom))
        }
        return parts.count == 1 ? parts[0] : .sequence(parts)
    }

    private mutating func parseQuantifiers(_ atom: Pattern) throws(ConstraintError) -> Pattern {
        var p = atom
        while let c = peek {
            switch c {
            case 0x2A: p = .star(p)
            case 0x2B: p = .plus(p)
            case 0x3F: p = .optional(p)
            case 0x7B:
                i += 1
                skipSpace()
                let low = ScalarReading.decimal(scalars, &i) ?? 0
                skipSpace()
                var high: Int? = low
                if peek == 0x2C {
                    i += 1
                    skipSpace()
                    high = ScalarReading.decimal(scalars, &i)
                    skipSpace()
                }
                guard peek == 0x7D else { throw fail("bad repetition {…}") }
                if let high, high < low { throw fail("bad repetition bounds {\(low),\(high)}") }
                if max(low, high ?? 0) > RegexCompiler.maxRepetition {
                    throw fail("repetition bound over \(RegexCompiler.maxRepetition)")
                }
                p = .repetition(p, min: low, max: high)
            default: return p
            }
            i += 1
        }
        return p
    }

    /// One character of a literal or class, escapes decoded.
    private mutating func character() throws(ConstraintError) -> UInt32 {
        guard let c = peek else { throw fail("unexpected end") }
        i += 1
        guard c == 0x5C else { return c }
        guard let e = peek else { throw fail("trailing backslash") }
        i += 1
        switch e {
        case 0x6E: return 0x0A
        case 0x74: return 0x09
        case 0x72: return 0x0D
        case 0x78: return try hex(2)
        case 0x75: return try hex(4)
        case 0x55: return try hex(8)
        case 0x5C, 0x22, 0x5B, 0x5D, 0x2D, 0x5E: return e
        default: throw fail("unknown escape '\\\(Character(Unicode.Scalar(e)!))'")
        }
    }

    private mutating func hex(_ digits: Int) throws(ConstraintError) -> UInt32 {
        switch ScalarReading.hexScalar(scalars, &i, digits: digits) {
        case .success(let value): return value
        case .failure(let problem): throw fail(problem.message)
        }
    }

    private mutating func parseClass() throws(ConstraintError) -> ScalarSet {
        var negated = false
        if peek == 0x5E {
            negated = true
            i += 1
        }
        var set = ScalarSet()
        while true {
            guard let c = peek else { throw fail("missing ']'") }
            if c == 0x5D {
                i += 1
                break
            }
            let low = try character()
            if peek == 0x2D, i + 1 < scalars.count, scalars[i + 1] != 0x5D {
                i += 1
                let high = try character()
                guard low <= high else { throw fail("bad class range") }
                set = set.union(ScalarSet([low...high]))
            } else {
                set = set.union(ScalarSet(low))
            }
        }
        return negated ? set.inverted() : set
    }
}

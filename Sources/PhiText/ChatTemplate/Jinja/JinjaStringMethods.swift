/// The `str` methods chat templates call (`content.strip()`, `text.split('</think>')`,
/// `role.startswith('tool')`, …), with Python's semantics: code points, not grapheme
/// clusters, and Python's notion of whitespace.
enum JinjaStringMethods {
    static func method(_ s: String, _ name: String) -> JinjaFunction? {
        guard let body = methods[name] else { return nil }
        return JinjaFunction(name: "str.\(name)") { args in try body(s, args) }
    }

    private typealias Method = @Sendable (String, JinjaArguments) throws -> JinjaValue

    private static let methods: [String: Method] = [
        "strip": { s, a in .string(try strip(s, a, "strip", leading: true, trailing: true)) },
        "lstrip": { s, a in .string(try strip(s, a, "lstrip", leading: true, trailing: false)) },
        "rstrip": { s, a in .string(try strip(s, a, "rstrip", leading: false, trailing: true)) },
        "split": { s, a in try split(s, a, "split", fromEnd: false) },
        "rsplit": { s, a in try split(s, a, "rsplit", fromEnd: true) },
        "splitlines": { s, a in
            let keep = try a.bind("splitlines", ["keepends"], defaults: ["keepends": .bool(false)])[
                0]
            return .list(PythonText.splitLines(s, keepEnds: keep.isTruthy).map(JinjaValue.string))
        },
        "upper": { s, a in
            _ = try a.bind("upper", [])
            return .string(s.uppercased())
        },
        "lower": { s, a in
            _ = try a.bind("lower", [])
            return .string(s.lowercased())
        },
        "title": { s, a in
            _ = try a.bind("title", [])
            return .string(PythonText.title(s))
        },
        "capitalize": { s, a in
            _ = try a.bind("capitalize", [])
            return .string(PythonText.capitalize(s))
        },
        "startswith": { s, a in try affix(s, a, "startswith", suffix: false) },
        "endswith": { s, a in try affix(s, a, "endswith", suffix: true) },
        "replace": { s, a in
            let p = try a.bind("replace", ["old", "new", "count"], defaults: ["count": .int(-1)])
            guard case .string(let old) = p[0], case .string(let new) = p[1],
                let count = p[2].intValue
            else {
                throw JinjaError.render("replace() arguments must be str, str, int")
            }
            return .string(try JinjaBudget.replace(s, old, new, count: count))
        },
        "find": { s, a in .int(try find(s, a, "find", fromEnd: false)) },
        "rfind": { s, a in .int(try find(s, a, "rfind", fromEnd: true)) },
        "count": { s, a in
            let sub = try stringArgument(try a.bind("count", ["sub"])[0], "count")
            return .int(PythonText.count(s, sub))
        },
        "join": { s, a in
            let items = try a.bind("join", ["iterable"])[0].iterate()
            let parts = try items.enumerated().map { i, item -> String in
                guard case .string(let text) = item else {
                    throw JinjaError.render(
                        "sequence item \(i): expected str instance, \(item.typeName) found")
                }
                return text
            }
            return .string(try JinjaBudget.joined(parts, separator: s))
        },
        "format": { s, a in .string(try PythonBraceFormat.format(s, a)) },
        "isdigit": { s, _ in
            .bool(
                !s.isEmpty
                    && s.unicodeScalars.allSatisfy {
                        $0.properties.numericType == .decimal || $0.properties.numericType == .digit
                    })
        },
        "isalpha": { s, _ in
            .bool(!s.isEmpty && s.unicodeScalars.allSatisfy(\.properties.isAlphabetic))
        },
        "isalnum": { s, _ in
            .bool(
                !s.isEmpty
                    && s.unicodeScalars.allSatisfy {
                        $0.properties.isAlphabetic || $0.properties.numericType != nil
                    })
        },
        "isspace": { s, _ in .bool(!s.isEmpty && s.unicodeScalars.allSatisfy(\.isPythonWhitespace))
        },
        "islower": { s, _ in .bool(PythonText.hasCased(s) && s == s.lowercased()) },
        "isupper": { s, _ in .bool(PythonText.hasCased(s) && s == s.uppercased()) },
    ]

    private static func stringArgument(_ value: JinjaValue, _ method: String) throws -> String {
        guard case .string(let s) = value else {
            throw JinjaError.render("\(method)() argument must be str, not \(value.typeName)")
        }
        return s
    }

    private static func strip(
        _ s: String, _ a: JinjaArguments, _ name: String, leading: Bool, trailing: Bool
    ) throws -> String {
        let chars = try a.bind(name, ["chars"], defaults: ["chars": .none])[0]
        let set: Set<Unicode.Scalar>?
        switch chars {
        case .none: set = nil
        case .string(let c): set = Set(c.unicodeScalars)
        default: throw JinjaError.render("\(name) arg must be None or str")
        }
        return PythonText.strip(s, leading: leading, trailing: trailing) { scalar in
            set.map { $0.contains(scalar) } ?? scalar.isPythonWhitespace
        }
    }

    private static func split(
        _ s: String, _ a: JinjaArguments, _ name: String, fromEnd: Bool
    ) throws -> JinjaValue {
        let p = try a.bind(
            name, ["sep", "maxsplit"], defaults: ["sep": .none, "maxsplit": .int(-1)])
        guard let maxSplit = p[1].intValue else {
            throw JinjaError.render("maxsplit must be an integer")
        }
        let parts: [String]
        switch p[0] {
        case .none: parts = PythonText.splitWhitespace(s, maxSplit: maxSplit, fromEnd: fromEnd)
        case .string(let sep):
            guard !sep.isEmpty else { throw JinjaError.render("empty separator") }
            parts = PythonText.split(s, separator: sep, maxSplit: maxSplit, fromEnd: fromEnd)
        default: throw JinjaError.render("must be str or None, not \(p[0].typeName)")
        }
        return .list(parts.map(JinjaValue.string))
    }

    private static func affix(
        _ s: String, _ a: JinjaArguments, _ name: String, suffix: Bool
    ) throws -> JinjaValue {
        let p = try a.bind(name, ["prefix"])[0]
        let candidates: [JinjaValue]
        if case .tuple(let items) = p { candidates = items } else { candidates = [p] }
        let scalars = Array(s.unicodeScalars)
        for candidate in candidates {
            let affix = Array(try stringArgument(candidate, name).unicodeScalars)
            let matches = suffix ? scalars.ends(with: affix) : scalars.starts(with: affix)
            if matches { return .bool(true) }
        }
        return .bool(false)
    }

    private static func find(
        _ s: String, _ a: JinjaArguments, _ name: String, fromEnd: Bool
    ) throws -> Int {
        let sub = try stringArgument(try a.bind(name, ["sub"])[0], name)
        return PythonText.offset(of: sub, in: s, fromEnd: fromEnd) ?? -1
    }
}

extension Array where Element: Equatable {
    fileprivate func ends(with suffix: [Element]) -> Bool {
        suffix.count <= count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}

import Foundation

/// Jinja's built-in filters that chat templates use, with jinja2 3.1's semantics (string
/// filters print their input with `str`, so an undefined input gives ""), plus
/// transformers' `tojson`. Sequence filters are in JinjaFilters+Sequences.swift.
enum JinjaFilters {
    typealias Filter = JinjaNamedFunctions<JinjaValue>.Function

    /// Every filter, by name.
    static let functions = JinjaNamedFunctions(
        kind: "filter", textFilters.merging(sequenceFilters) { a, _ in a })

    private static let textFilters: [String: Filter] = [
        "string": { v, a, _ in
            _ = try a.bind("string", [])
            return .string(try v.pythonString)
        },
        "upper": { v, a, _ in
            _ = try a.bind("upper", [])
            return .string(try v.pythonString.uppercased())
        },
        "lower": { v, a, _ in
            _ = try a.bind("lower", [])
            return .string(try v.pythonString.lowercased())
        },
        "capitalize": { v, a, _ in
            _ = try a.bind("capitalize", [])
            return .string(try PythonText.capitalize(v.pythonString))
        },
        "title": { v, a, _ in
            _ = try a.bind("title", [])
            return .string(try jinjaTitle(v.pythonString))
        },
        "trim": { v, a, _ in
            let chars = try a.bind("trim", ["chars"], defaults: ["chars": .none])[0]
            let set = chars.isNone ? nil : Set(try chars.pythonString.unicodeScalars)
            return .string(
                PythonText.strip(try v.pythonString, leading: true, trailing: true) { scalar in
                    set.map { $0.contains(scalar) } ?? scalar.isPythonWhitespace
                })
        },
        "replace": { v, a, _ in
            let p = try a.bind("replace", ["old", "new", "count"], defaults: ["count": .none])
            let count = p[2].isNone ? -1 : (p[2].intValue ?? -1)
            return .string(
                try JinjaBudget.replace(
                    try v.pythonString, try p[0].pythonString, try p[1].pythonString, count: count))
        },
        "indent": { v, a, _ in
            let p = try a.bind(
                "indent", ["width", "first", "blank"],
                defaults: ["width": .int(4), "first": .bool(false), "blank": .bool(false)])
            let indentation: String
            if case .string(let s) = p[0] {
                indentation = s
            } else {
                let width = max(0, p[0].intValue ?? 4)
                try JinjaBudget.checkLength(width, "an indentation")
                indentation = String(repeating: " ", count: width)
            }
            let text = try v.pythonString
            // Every line may get the indentation.
            let lines = text.utf8.reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            try JinjaBudget.checkLength(
                JinjaBudget.product(lines, indentation.utf8.count) + text.utf8.count,
                "an indented string")
            return .string(indent(text, indentation, first: p[1].isTruthy, blank: p[2].isTruthy))
        },
        "center": { v, a, _ in
            let width =
                try a.bind("center", ["width"], defaults: ["width": .int(80)])[0].intValue ?? 80
            let s = try v.pythonString
            try JinjaBudget.checkLength(width, "a centred string")
            // A negative width (even -2**63, which trapped) pads nothing, as in Python.
            let length = s.unicodeScalars.count
            let padding = width > length ? width - length : 0
            // Python's str.center puts the odd space on the right unless the width is odd.
            let left = padding / 2 + (padding & width & 1)
            return .string(
                String(repeating: " ", count: left) + s
                    + String(repeating: " ", count: padding - left))
        },
        "truncate": { v, a, _ in
            let p = try a.bind(
                "truncate", ["length", "killwords", "end", "leeway"],
                defaults: [
                    "length": .int(255), "killwords": .bool(false), "end": .string("..."),
                    "leeway": .int(5),
                ])
            return .string(try truncate(v.pythonString, p))
        },
        "wordcount": { v, a, _ in
            _ = try a.bind("wordcount", [])
            let words = try v.pythonString.unicodeScalars.split {
                !($0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "_")
            }
            return .int(words.count)
        },
        "escape": { v, a, _ in
            _ = try a.bind("escape", [])
            return .string(try htmlEscape(v.pythonString))
        },
        "e": { v, a, _ in
            _ = try a.bind("e", [])
            return .string(try htmlEscape(v.pythonString))
        },
        "safe": { v, a, _ in
            _ = try a.bind("safe", [])
            return v.isUndefined ? .string("") : .string(try v.pythonString)
        },
        "format": { v, a, _ in
            guard a.positional.isEmpty || a.keywords.isEmpty else {
                throw JinjaError.render(
                    "can't handle positional and keyword arguments at the same time")
            }
            var mapping = JinjaDict()
            for (name, value) in a.keywords { mapping.set(name, value) }
            let args: JinjaValue = a.keywords.isEmpty ? .tuple(a.positional) : .dict(mapping)
            return .string(try PythonPercentFormat.format(v.pythonString, args))
        },
        "tojson": { v, a, _ in try toJSON(v, a) },
        "int": { v, a, _ in
            let p = try a.bind(
                "int", ["default", "base"], defaults: ["default": .int(0), "base": .int(10)])
            return toInt(v, base: p[1].intValue ?? 10) ?? p[0]
        },
        "float": { v, a, _ in
            let fallback = try a.bind("float", ["default"], defaults: ["default": .double(0)])[0]
            return toFloat(v).map(JinjaValue.double) ?? fallback
        },
        "abs": { v, a, _ in
            _ = try a.bind("abs", [])
            switch v {
            case .int(let i) where i != .min: return .int(abs(i))
            case .bool(let b): return .int(b ? 1 : 0)
            case .double(let d): return .double(abs(d))
            default: throw JinjaError.render("bad operand type for abs(): '\(v.typeName)'")
            }
        },
        "round": { v, a, _ in
            let p = try a.bind(
                "round", ["precision", "method"],
                defaults: ["precision": .int(0), "method": .string("common")])
            return try round(v, precision: p[0].intValue ?? 0, method: p[1].pythonString)
        },
        "default": { v, a, _ in try defaultFilter(v, a, "default") },
        "d": { v, a, _ in try defaultFilter(v, a, "d") },
        "attr": { v, a, _ in
            let name = try a.bind("attr", ["name"])[0].pythonString
            return JinjaMembers.attribute(of: v, name, fallBackToItem: false)
        },
    ]

    private static func defaultFilter(
        _ v: JinjaValue, _ a: JinjaArguments, _ name: String
    ) throws -> JinjaValue {
        let p = try a.bind(
            name, ["default_value", "boolean"],
            defaults: ["default_value": .string(""), "boolean": .bool(false)])
        return v.isUndefined || (p[1].isTruthy && !v.isTruthy) ? p[0] : v
    }

    /// Jinja's `title` filter (not `str.title`): words start after `-`, whitespace, `(`,
    /// `{`, `[` or `<`; each word's first character upper-cased, the rest lower-cased.
    static func jinjaTitle(_ s: String) -> String {
        var out = ""
        var atWordStart = true
        for scalar in s.unicodeScalars {
            let isBoundary = scalar.isPythonWhitespace || "-({[<".unicodeScalars.contains(scalar)
            if isBoundary {
                out.unicodeScalars.append(scalar)
                atWordStart = true
            } else {
                out +=
                    atWordStart
                    ? scalar.properties.uppercaseMapping : scalar.properties.lowercaseMapping
                atWordStart = false
            }
        }
        return out
    }

    private static func indent(
        _ s: String, _ indentation: String, first: Bool, blank: Bool
    ) -> String {
        let lines = PythonText.splitLines(s + "\n", keepEnds: false)
        var result: String
        if blank {
            result = lines.joined(separator: "\n" + indentation)
        } else {
            result = lines.first ?? ""
            let rest = lines.dropFirst()
            if !rest.isEmpty {
                result +=
                    "\n" + rest.map { $0.isEmpty ? $0 : indentation + $0 }.joined(separator: "\n")
            }
        }
        return first ? indentation + result : result
    }

    private static func truncate(_ s: String, _ p: [JinjaValue]) throws -> String {
        let length = p[0].intValue ?? 255
        let end = try p[2].pythonString
        let leeway = p[3].intValue ?? 5
        let scalars = Array(s.unicodeScalars)
        let endCount = end.unicodeScalars.count
        guard length >= endCount, leeway >= 0 else {
            throw JinjaError.render("truncate: expected length >= \(endCount) and leeway >= 0")
        }
        // Compared without adding: `length + leeway` overflowed for huge lengths.
        if scalars.count <= length || scalars.count - length <= leeway { return s }
        let head = String(pythonScalars: scalars.prefix(length - endCount))
        if p[1].isTruthy { return head + end }
        return PythonText.split(head, separator: " ", maxSplit: 1, fromEnd: true)[0] + end
    }

    static func htmlEscape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "'": out += "&#39;"
            case "\"": out += "&#34;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// transformers' `tojson(x, ensure_ascii=False, indent=None, separators=None,
    /// sort_keys=False)`.
    private static func toJSON(_ v: JinjaValue, _ a: JinjaArguments) throws -> JinjaValue {
        let p = try a.bind(
            "tojson", ["ensure_ascii", "indent", "separators", "sort_keys"],
            defaults: [
                "ensure_ascii": .bool(false), "indent": .none, "separators": .none,
                "sort_keys": .bool(false),
            ])
        var indent: String?
        switch p[1] {
        case .none: indent = nil
        case .string(let s): indent = s
        default:
            guard let n = p[1].intValue else {
                throw JinjaError.render("tojson: indent must be an int or a string")
            }
            try JinjaBudget.checkLength(n, "a JSON indentation")
            indent = String(repeating: " ", count: max(0, n))
        }
        var separators: (String, String)?
        if !p[2].isNone {
            let parts = try p[2].iterate()
            guard parts.count == 2, case .string(let item) = parts[0],
                case .string(let key) = parts[1]
            else {
                throw JinjaError.render("tojson: separators must be a pair of strings")
            }
            separators = (item, key)
        }
        let encoder = PythonJSONEncoder(
            indent: indent, separators: separators, sortKeys: p[3].isTruthy,
            ensureASCII: p[0].isTruthy)
        return .string(try encoder.encode(v))
    }

    /// `int(value)` as the filter does it: strings in `base` (with 0x/0o/0b prefixes for
    /// those bases), "42.23" through float, failures → nil.
    private static func toInt(_ v: JinjaValue, base: Int) -> JinjaValue? {
        switch v {
        case .int, .bool: return .int(v.intValue!)
        case .double(let d):
            guard d.isFinite, abs(d) < 9.2e18 else { return nil }
            return JinjaBudget.int(exactly: d.rounded(.towardZero)).map(JinjaValue.int)
        case .string(let s):
            var text = s.trimmingCharacters(in: .whitespaces).replacingOccurrences(
                of: "_", with: "")
            var sign = 1
            if text.hasPrefix("-") || text.hasPrefix("+") {
                sign = text.hasPrefix("-") ? -1 : 1
                text.removeFirst()
            }
            let prefixes = [16: "0x", 8: "0o", 2: "0b"]
            // Base 0 reads the prefix, as Python's int(s, 0); a base outside 2…36 is Python's
            // ValueError, which sends Jinja to its float fallback (Int(radix:) trapped).
            var radix = base
            if base == 0 {
                radix = prefixes.first { text.lowercased().hasPrefix($0.value) }?.key ?? 10
            }
            if let prefix = prefixes[radix], text.lowercased().hasPrefix(prefix) {
                text.removeFirst(2)
            }
            if (2...36).contains(radix), let i = Int(text, radix: radix) {
                return .int(sign * i)
            }
            return toFloat(v).flatMap { toInt(.double($0), base: 10) }
        default: return nil
        }
    }

    private static func toFloat(_ v: JinjaValue) -> Double? {
        switch v {
        case .int, .bool, .double: return v.numericValue
        case .string(let s):
            let text = s.trimmingCharacters(in: .whitespaces).lowercased()
            switch text {
            case "inf", "+inf", "infinity", "+infinity": return .infinity
            case "-inf", "-infinity": return -.infinity
            case "nan", "+nan", "-nan": return .nan
            default: return text.contains("x") ? nil : Double(text)
            }
        default: return nil
        }
    }

    /// Python's `round(x, n)` (half to even on the exact binary value) for "common";
    /// `math.floor`/`ceil(x * 10**n) / 10**n` for "floor"/"ceil". Always a float, as Jinja's.
    private static func round(_ v: JinjaValue, precision: Int, method: String) throws -> JinjaValue
    {
        guard let x = v.numericValue else {
            throw JinjaError.render("type \(v.typeName) doesn't define __round__ method")
        }
        switch method {
        case "common":
            if case .int(let i) = v { return .int(i) }  // round(int, n) stays an int
            if precision == 0 { return .double(x.rounded(.toNearestOrEven)) }
            // A double has at most 17 significant digits: beyond ~340 decimals, rounding
            // changes nothing (Python returns x), and "%.999999999f" never finished.
            if precision > 340 || !x.isFinite { return .double(x) }
            return .double(Double(String(format: "%.\(max(0, precision))f", x)) ?? x)
        case "floor", "ceil":
            let scale = pow(10.0, Double(precision))
            return .double((method == "floor" ? floor(x * scale) : ceil(x * scale)) / scale)
        default:
            throw JinjaError.render("method must be common, ceil or floor")
        }
    }
}

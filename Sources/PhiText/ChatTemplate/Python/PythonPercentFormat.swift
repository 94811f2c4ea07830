import Foundation

/// Python's `format % args` (printf-style) for the conversions templates use: `%s`, `%r`,
/// `%d`/`%i`, `%f` with an optional precision, `%%`, and `%(name)s` with a dict. Anything
/// else is an error rather than a guess.
enum PythonPercentFormat {
    static func format(_ format: String, _ args: JinjaValue) throws -> String {
        var positional: [JinjaValue]
        var mapping: JinjaDict?
        switch args {
        case .tuple(let items): positional = items
        case .dict(let d):
            positional = [args]
            mapping = d
        default: positional = [args]
        }
        var out = ""
        var scalars = Array(format.unicodeScalars)[...]
        while let s = scalars.popFirst() {
            guard s == "%" else {
                out.unicodeScalars.append(s)
                continue
            }
            var value: JinjaValue?
            if scalars.first == "(" {
                guard let close = scalars.firstIndex(of: ")"), let mapping else {
                    throw JinjaError.render("format requires a mapping")
                }
                let key = String(
                    pythonScalars: scalars[scalars.index(after: scalars.startIndex)..<close])
                value = mapping[key] ?? .undefined("KeyError: '\(key)'")
                scalars = scalars[scalars.index(after: close)...]
            }
            var precision: Int?
            if scalars.first == "." {
                scalars.removeFirst()
                var digits = ""
                while let d = scalars.first, ("0"..."9").contains(d) {
                    digits.unicodeScalars.append(d)
                    scalars.removeFirst()
                }
                precision = Int(digits) ?? Int.max
                if precision! > JinjaBudget.maxPrecision {
                    throw JinjaBudget.exceeded("a precision of \(digits) digits")
                }
            }
            guard let conversion = scalars.popFirst() else {
                throw JinjaError.render("incomplete format")
            }
            if conversion == "%" {
                out += "%"
                continue
            }
            if value == nil {
                guard !positional.isEmpty else {
                    throw JinjaError.render("not enough arguments for format string")
                }
                value = positional.removeFirst()
            }
            out += try convert(value!, conversion, precision: precision)
            try JinjaBudget.checkLength(out.utf8.count, "a formatted string")
        }
        guard positional.isEmpty || mapping != nil else {
            throw JinjaError.render("not all arguments converted during string formatting")
        }
        return out
    }

    private static func convert(
        _ value: JinjaValue, _ conversion: Unicode.Scalar, precision: Int?
    ) throws -> String {
        switch conversion {
        case "s": return try value.pythonString
        case "r": return try value.pythonRepr
        case "d", "i":
            if let i = value.intValue { return String(i) }
            if case .double(let d) = value, d.isFinite {
                // Python prints any integer; ours end at 64 bits (Int(1e19) trapped).
                guard let i = JinjaBudget.int(exactly: d.rounded(.towardZero)) else {
                    throw JinjaBudget.integerRange("%d of \(d)")
                }
                return String(i)
            }
        case "f", "F":
            if let d = value.numericValue { return String(format: "%.\(precision ?? 6)f", d) }
        default:
            throw JinjaError.render("unsupported format character '\(Character(conversion))'")
        }
        throw JinjaError.render(
            "%\(Character(conversion)) format: a number is required, not \(value.typeName)")
    }
}

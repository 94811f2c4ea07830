import Foundation

/// `str.format(*args, **kwargs)`: `{}`, `{0}`, `{name}`, `{name.attr}`, `{name[key]}`, `!s`/`!r`
/// conversions and simple specs (`[[fill]align][width][.precision][s|d|f]`), `{{`/`}}`
/// escapes. Unsupported specs are errors.
enum PythonBraceFormat {
    static func format(_ format: String, _ args: JinjaArguments) throws -> String {
        var out = ""
        var scalars = Array(format.unicodeScalars)[...]
        var autoIndex = 0
        while let s = scalars.popFirst() {
            if s == "}" {
                guard scalars.popFirst() == "}" else {
                    throw JinjaError.render("Single '}' encountered in format string")
                }
                out += "}"
                continue
            }
            guard s == "{" else {
                out.unicodeScalars.append(s)
                continue
            }
            if scalars.first == "{" {
                scalars.removeFirst()
                out += "{"
                continue
            }
            guard let close = scalars.firstIndex(of: "}") else {
                throw JinjaError.render("Single '{' encountered in format string")
            }
            let field = String(pythonScalars: scalars[scalars.startIndex..<close])
            scalars = scalars[scalars.index(after: close)...]
            out += try render(field, args, &autoIndex)
            try JinjaBudget.checkLength(out.utf8.count, "a formatted string")
        }
        return out
    }

    private static func render(
        _ field: String, _ args: JinjaArguments, _ autoIndex: inout Int
    ) throws -> String {
        var rest = Substring(field)
        var spec = ""
        if let colon = rest.firstIndex(of: ":") {
            spec = String(rest[rest.index(after: colon)...])
            rest = rest[..<colon]
        }
        var conversion: Character?
        if let bang = rest.firstIndex(of: "!") {
            conversion = rest[rest.index(after: bang)...].first
            rest = rest[..<bang]
        }
        let nameEnd = rest.firstIndex { $0 == "." || $0 == "[" } ?? rest.endIndex
        let name = rest[..<nameEnd]
        var value: JinjaValue
        if name.isEmpty {
            value = try positional(args, autoIndex)
            autoIndex += 1
        } else if let index = Int(name) {
            value = try positional(args, index)
        } else {
            guard let keyword = args.keywords.last(where: { $0.name == name }) else {
                throw JinjaError.render("KeyError: '\(name)'")
            }
            value = keyword.value
        }
        var path = rest[nameEnd...]
        while let first = path.first {
            path = path.dropFirst()
            let end = path.firstIndex { $0 == "." || $0 == "[" || $0 == "]" } ?? path.endIndex
            let part = String(path[..<end])
            path = path[end...]
            if first == "." {
                value = JinjaMembers.attribute(of: value, part)
            } else {
                value = JinjaMembers.item(of: value, Int(part).map(JinjaValue.int) ?? .string(part))
                if path.first == "]" { path = path.dropFirst() }
            }
        }
        let text = conversion == "r" ? try value.pythonRepr : nil
        return try apply(spec, to: value, text: text)
    }

    private static func positional(_ args: JinjaArguments, _ index: Int) throws -> JinjaValue {
        guard args.positional.indices.contains(index) else {
            throw JinjaError.render(
                "Replacement index \(index) out of range for positional args tuple")
        }
        return args.positional[index]
    }

    private static func apply(_ spec: String, to value: JinjaValue, text: String?) throws -> String
    {
        guard !spec.isEmpty else { return try text ?? value.pythonString }
        var chars = Array(spec)[...]
        var fill: Character = " "
        var align: Character?
        if chars.count >= 2, "<>^".contains(chars[chars.startIndex + 1]) {
            fill = chars.removeFirst()
            align = chars.removeFirst()
        } else if let first = chars.first, "<>^".contains(first) {
            align = chars.removeFirst()
        }
        var widthText = ""
        while let c = chars.first, c.isNumber {
            widthText.append(c)
            chars.removeFirst()
        }
        var precision: Int?
        if chars.first == "." {
            chars.removeFirst()
            var digits = ""
            while let c = chars.first, c.isNumber {
                digits.append(c)
                chars.removeFirst()
            }
            precision = Int(digits) ?? Int.max
            // A string's precision only cuts it; a number's is printed digit by digit.
            let isString = if case .string = value { true } else { false }
            if !isString && precision! > JinjaBudget.maxPrecision {
                throw JinjaBudget.exceeded("a precision of \(digits) digits")
            }
        }
        let type = chars.popFirst()
        guard chars.isEmpty else { throw JinjaError.render("unsupported format spec '\(spec)'") }
        var body: String
        switch type {
        case nil, "s":
            body = try text ?? value.pythonString
            if let precision, case .string = value {
                body = String(body.unicodeScalars.prefix(precision).map(Character.init))
            }
        case "d":
            guard let i = value.intValue else {
                throw JinjaError.render("format 'd' needs an integer")
            }
            body = String(i)
        case "f":
            guard let d = value.numericValue else {
                throw JinjaError.render("format 'f' needs a number")
            }
            body = String(format: "%.\(precision ?? 6)f", d)
        default:
            throw JinjaError.render("unsupported format spec '\(spec)'")
        }
        let width = widthText.isEmpty ? 0 : Int(widthText) ?? Int.max
        try JinjaBudget.checkLength(width, "a formatted field")
        let padding = max(0, width - body.unicodeScalars.count)
        guard padding > 0 else { return body }
        let isNumber = try value.numericValue != nil && !value.pythonString.isEmpty
        switch align ?? (isNumber && type != "s" ? ">" : "<") {
        case ">": return String(repeating: fill, count: padding) + body
        case "^":
            return String(repeating: fill, count: padding / 2) + body
                + String(repeating: fill, count: padding - padding / 2)
        default: return body + String(repeating: fill, count: padding)
        }
    }
}

// Number and string literals inside tags, with the grammar of Jinja2's `integer_re`,
// `float_re` and `string_re`, and Python's `unicode-escape` rules for string escapes.

extension JinjaLexer {
    /// An integer (`42`, `1_000`, `0x1F`, `0o17`, `0b101`) or float (`1.5`, `2e-3`, `1_0.5`)
    /// literal starting at the current position, or nil if there is none.
    mutating func lexNumber() throws -> (kind: JinjaToken.Kind, start: Int)? {
        let src = source
        let start = position
        guard start < src.count, src[start].isASCIIDigit else { return nil }
        if let end = floatEnd(from: start) {
            let text = String(pythonScalars: src[start..<end].filter { $0 != "_" })
            position = end
            guard let value = Double(text) else {
                throw syntaxError("invalid float literal '\(text)'", at: start)
            }
            return (.float(value), start)
        }
        let (end, digits, radix) = integerEnd(from: start)
        position = end
        guard let value = Int(digits, radix: radix) else {
            throw syntaxError("integer literal too large", at: start)
        }
        return (.integer(value), start)
    }

    /// `(\d+_)*\d+` (digits, single underscores between them): the offset after it, or nil.
    private func digitRunEnd(from start: Int, _ isDigit: (Unicode.Scalar) -> Bool) -> Int? {
        let src = source
        var i = start
        guard i < src.count, isDigit(src[i]) else { return nil }
        while i < src.count, isDigit(src[i]) { i += 1 }
        while i + 1 < src.count, src[i] == "_", isDigit(src[i + 1]) {
            i += 1
            while i < src.count, isDigit(src[i]) { i += 1 }
        }
        return i
    }

    private func floatEnd(from start: Int) -> Int? {
        let src = source
        if start > 0, src[start - 1] == "." { return nil }  // (?<!\.)
        guard let whole = digitRunEnd(from: start, \.isASCIIDigit) else { return nil }
        var end = whole
        var hasFraction = false
        if end < src.count, src[end] == ".",
            let fraction = digitRunEnd(from: end + 1, \.isASCIIDigit)
        {
            end = fraction
            hasFraction = true
        }
        if end < src.count, src[end] == "e" || src[end] == "E" {
            var i = end + 1
            if i < src.count, src[i] == "+" || src[i] == "-" { i += 1 }
            if let exponent = digitRunEnd(from: i, \.isASCIIDigit) { return exponent }
        }
        return hasFraction ? end : nil
    }

    /// The end of an integer literal, its digits without underscores, and its radix.
    private func integerEnd(from start: Int) -> (end: Int, digits: String, radix: Int) {
        let src = source
        if src[start] == "0", start + 1 < src.count {
            let prefixes: [(Unicode.Scalar, Int, (Unicode.Scalar) -> Bool)] = [
                ("b", 2, { $0 == "0" || $0 == "1" }),
                ("o", 8, { ("0"..."7").contains($0) }),
                ("x", 16, \.isASCIIHexDigit),
            ]
            let marker = src[start + 1].value | 0x20  // ASCII lowercase: 0X1F is 0x1F
            for (letter, radix, isDigit) in prefixes where marker == letter.value {
                // (_?digit)+
                var i = start + 2
                var digits = ""
                while true {
                    let j = i < src.count && src[i] == "_" ? i + 1 : i
                    guard j < src.count, isDigit(src[j]) else { break }
                    digits.unicodeScalars.append(src[j])
                    i = j + 1
                }
                if !digits.isEmpty { return (i, digits, radix) }
            }
        }
        let end: Int
        if src[start] == "0" {
            end = digitRunEnd(from: start) { $0 == "0" } ?? start + 1
        } else {
            end = digitRunEnd(from: start, \.isASCIIDigit) ?? start + 1
        }
        return (end, String(pythonScalars: src[start..<end].filter { $0 != "_" }), 10)
    }

    /// A quoted string (either quote; a backslash escapes any character, newlines included),
    /// unescaped the way Python's `unicode-escape` codec does it.
    mutating func lexString() throws -> String {
        let src = source
        let start = position
        let quote = src[start]
        var i = start + 1
        while i < src.count, src[i] != quote {
            i += src[i] == "\\" ? 2 : 1
        }
        guard i < src.count else { throw syntaxError("unterminated string literal", at: start) }
        position = i + 1
        return try unescape(src[(start + 1)..<i], at: start)
    }

    private func unescape(_ body: ArraySlice<Unicode.Scalar>, at start: Int) throws -> String {
        var out = String.UnicodeScalarView()
        var i = body.startIndex
        func hexValue(count: Int) throws -> UInt32 {
            guard i + count <= body.endIndex,
                let v = UInt32(String(pythonScalars: body[i..<(i + count)]), radix: 16)
            else { throw syntaxError("truncated escape sequence in string literal", at: start) }
            i += count
            return v
        }
        while i < body.endIndex {
            let s = body[i]
            i += 1
            guard s == "\\", i < body.endIndex else {
                out.append(s)
                continue
            }
            let e = body[i]
            i += 1
            switch e {
            case "\n": break  // line continuation
            case "\\", "'", "\"": out.append(e)
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "a": out.append("\u{07}")
            case "b": out.append("\u{08}")
            case "f": out.append("\u{0C}")
            case "v": out.append("\u{0B}")
            case "0"..."7":
                var value = e.value - 0x30
                var digits = 1
                while digits < 3, i < body.endIndex, ("0"..."7").contains(body[i]) {
                    value = value * 8 + body[i].value - 0x30
                    i += 1
                    digits += 1
                }
                out.append(Unicode.Scalar(value)!)
            case "x", "u", "U":
                let value = try hexValue(count: e == "x" ? 2 : e == "u" ? 4 : 8)
                guard let scalar = Unicode.Scalar(value) else {
                    throw syntaxError(
                        "invalid \\\(Character(e)) escape in string literal", at: start)
                }
                out.append(scalar)
            case "N":
                throw syntaxError(
                    "\\N{…} escapes are not supported in string literals", at: start)
            default:
                out.append("\\")
                out.append(e)
            }
        }
        return String(out)
    }
}

extension Unicode.Scalar {
    /// 0-9 only (Python's `\d` would take any Unicode digit; Jinja's number literals are ASCII).
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }

    fileprivate var isASCIIHexDigit: Bool {
        isASCIIDigit || ("a"..."f").contains(self) || ("A"..."F").contains(self)
    }
}

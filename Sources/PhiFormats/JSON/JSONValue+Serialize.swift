// Writing JSON: compactly (safetensors headers, like serde_json) and exactly as Python's
// `json.dump(obj, f, indent=4)` writes it (config.json, index files), so a file phikit rewrites
// is byte-identical to the one mlx_lm / transformers would have written.

extension JSONValue {
    /// Compact JSON with no whitespace, e.g. `{"a":1,"b":[1,2]}`. Numbers keep their literal;
    /// non-ASCII text is written as UTF-8 (as serde_json, which writes safetensors headers, does).
    public func serialized() -> String {
        var out = ""
        writeCompact(into: &out)
        return out
    }

    /// Byte-identical to Python's `json.dump(value, f, indent=indent)` for the value Python's
    /// `json.load` would read from `serialized()`: items separated by "," and a newline, ": "
    /// after keys, `ensure_ascii` escapes (`\u00e9`, surrogate pairs above U+FFFF), empty
    /// containers as `{}` and `[]`, no trailing newline.
    ///
    /// Numbers go through the same normalisation Python applies: an integer literal is printed
    /// as an integer (`-0` → `0`), any other literal as `repr(float(literal))`
    /// (`1e-5` → `1e-05`, `1E3` → `1000.0`, `1e400` → `Infinity`).
    public func pythonJSONDump(indent: Int = 4) -> String {
        var out = ""
        writePython(into: &out, indent: max(0, indent), level: 0)
        return out
    }

    private func writeCompact(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let literal): out += literal
        case .string(let s): writeString(s, asciiOnly: false, into: &out)
        case .array(let elements):
            writeList(elements, "[", "]", into: &out) { element, out in
                element.writeCompact(into: &out)
            }
        case .object(let members):
            writeList(members, "{", "}", into: &out) { member, out in
                writeString(member.key, asciiOnly: false, into: &out)
                out += ":"
                member.value.writeCompact(into: &out)
            }
        }
    }

    private func writePython(into out: inout String, indent: Int, level: Int) {
        let inner = "\n" + String(repeating: " ", count: indent * (level + 1))
        let outer = "\n" + String(repeating: " ", count: indent * level)
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let literal): out += pythonNumber(literal)
        case .string(let s): writeString(s, asciiOnly: true, into: &out)
        case .array(let elements):
            writeList(elements, "[", "]", inner: inner, outer: outer, into: &out) { element, out in
                element.writePython(into: &out, indent: indent, level: level + 1)
            }
        case .object(let members):
            writeList(members, "{", "}", inner: inner, outer: outer, into: &out) { member, out in
                writeString(member.key, asciiOnly: true, into: &out)
                out += ": "
                member.value.writePython(into: &out, indent: indent, level: level + 1)
            }
        }
    }
}

/// An array's or object's brackets around its items, separated by commas; `inner` goes before
/// each item and `outer` before the closing bracket (Python's newline and indentation; empty
/// for compact JSON). An empty list is just its brackets, as Python writes `[]` and `{}`.
private func writeList<Items: Collection>(
    _ items: Items, _ open: String, _ close: String, inner: String = "", outer: String = "",
    into out: inout String, _ writeItem: (Items.Element, inout String) -> Void
) {
    out += open
    if !items.isEmpty {
        for (i, item) in items.enumerated() {
            out += i > 0 ? "," + inner : inner
            writeItem(item, &out)
        }
        out += outer
    }
    out += close
}

/// What Python prints for a number after `json.load`: ints stay ints, floats are `repr`'d.
private func pythonNumber(_ literal: String) -> String {
    switch literal {
    case "NaN", "Infinity", "-Infinity": return literal
    default: break
    }
    if JSONValue.isIntegerLiteral(literal) {
        // Python ints are unbounded; only the sign of zero can change.
        return literal == "-0" ? "0" : literal
    }
    guard let value = Double(literal) else { return literal }
    return pythonRepr(value)
}

/// Writes a quoted JSON string. `asciiOnly` follows Python's `ensure_ascii=True`: everything
/// outside printable ASCII (including DEL) becomes `\uXXXX` in lowercase hex, with surrogate
/// pairs above U+FFFF. Otherwise only quotes, backslashes and control characters are escaped.
private func writeString(_ s: String, asciiOnly: Bool, into out: inout String) {
    out += "\""
    for scalar in s.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case "\u{08}": out += "\\b"
        case "\u{0C}": out += "\\f"
        default:
            let v = scalar.value
            if v < 0x20 || (asciiOnly && v >= 0x7F) {
                if v > 0xFFFF {
                    let u = v - 0x10000
                    appendUEscape(0xD800 + (u >> 10), into: &out)
                    appendUEscape(0xDC00 + (u & 0x3FF), into: &out)
                } else {
                    appendUEscape(v, into: &out)
                }
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
    }
    out += "\""
}

private func appendUEscape(_ unit: UInt32, into out: inout String) {
    let hex = String(unit, radix: 16)
    out += "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
}

/// Python's `repr(float)`: the shortest digits that round-trip (Swift's `description` computes
/// the same digits), laid out the Python way — positional when the decimal exponent is in
/// [-4, 16), else `d.ddde±XX` with at least two exponent digits.
func pythonRepr(_ x: Double) -> String {
    if x.isNaN { return "NaN" }
    if x.isInfinite { return x < 0 ? "-Infinity" : "Infinity" }
    if x == 0 { return x.sign == .minus ? "-0.0" : "0.0" }

    // Decompose Swift's shortest representation into digits and a decimal-point position:
    // value = 0.d1d2d3… × 10^decpt.
    let text = x.magnitude.description
    var mantissa = Substring(text)
    var exponent = 0
    if let e = text.firstIndex(where: { $0 == "e" || $0 == "E" }) {
        mantissa = text[..<e]
        exponent = Int(text[text.index(after: e)...]) ?? 0
    }
    let parts = mantissa.split(separator: ".", omittingEmptySubsequences: false)
    let intPart = parts.first ?? ""
    let fracPart = parts.count > 1 ? parts[1] : ""
    var digits = Array(intPart + fracPart)
    var decpt = intPart.count + exponent
    while digits.first == "0" {
        digits.removeFirst()
        decpt -= 1
    }
    while digits.last == "0" { digits.removeLast() }
    if digits.isEmpty { return x.sign == .minus ? "-0.0" : "0.0" }

    var out = x.sign == .minus ? "-" : ""
    if decpt <= -4 || decpt > 16 {
        out.append(digits[0])
        if digits.count > 1 { out += "." + String(digits[1...]) }
        let e = decpt - 1
        out += e < 0 ? "e-" : "e+"
        let magnitude = String(abs(e))
        out += (magnitude.count < 2 ? "0" : "") + magnitude
    } else if decpt <= 0 {
        out += "0." + String(repeating: "0", count: -decpt) + String(digits)
    } else if decpt >= digits.count {
        out += String(digits) + String(repeating: "0", count: decpt - digits.count) + ".0"
    } else {
        out += String(digits[..<decpt]) + "." + String(digits[decpt...])
    }
    return out
}

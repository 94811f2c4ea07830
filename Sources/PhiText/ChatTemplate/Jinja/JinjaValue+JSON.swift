import PhiFormats

/// The `tojson` filter transformers installs: `json.dumps(x, ensure_ascii=False, indent=indent,
/// separators=separators, sort_keys=sort_keys)`. Unlike Jinja's own `tojson` it does not
/// HTML-escape `<`, `>`, `&` and `'`, and it keeps non-ASCII text as it is (unless asked for
/// `ensure_ascii=True`). Strings are quoted by PhiFormats' JSON writer, which escapes exactly
/// as Python's json does.
struct PythonJSONEncoder {
    /// `None` (compact, one line) or the text repeated per nesting level.
    var indent: String?
    var itemSeparator: String
    var keySeparator: String
    var sortKeys = false
    /// Non-ASCII text as `\uXXXX` escapes.
    var ensureASCII = false

    /// Python's defaults: `", "` between items on one line, `","` before a newline when
    /// indenting, `": "` after keys.
    init(
        indent: String?, separators: (String, String)? = nil, sortKeys: Bool = false,
        ensureASCII: Bool = false
    ) {
        self.indent = indent
        self.itemSeparator = separators?.0 ?? (indent == nil ? ", " : ",")
        self.keySeparator = separators?.1 ?? ": "
        self.sortKeys = sortKeys
        self.ensureASCII = ensureASCII
    }

    func encode(_ value: JinjaValue) throws -> String {
        var out = ""
        try write(value, level: 0, into: &out)
        return out
    }

    private func write(_ value: JinjaValue, level: Int, into out: inout String) throws {
        switch value {
        case .none: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let i): out += String(i)
        case .double(let d):
            if d.isNaN {
                out += "NaN"
            } else if d.isInfinite {
                out += d < 0 ? "-Infinity" : "Infinity"
            } else {
                out += JinjaValue.pythonFloat(d)
            }
        case .string(let s): writeString(s, into: &out)
        case .list(let items), .tuple(let items):
            try writeContainer("[", "]", items.count, level: level, into: &out) { i, out in
                try write(items[i], level: level + 1, into: &out)
            }
        case .dict(let dict):
            var members = try dict.items.map { (key: try Self.keyString($0.key), value: $0.value) }
            if sortKeys {
                members.sort {
                    $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars)
                }
            }
            try writeContainer("{", "}", members.count, level: level, into: &out) { i, out in
                writeString(members[i].key, into: &out)
                out += keySeparator
                try write(members[i].value, level: level + 1, into: &out)
            }
        case .undefined, .namespace, .loop, .function:
            throw JinjaError.render("Object of type \(value.typeName) is not JSON serializable")
        }
    }

    private func writeContainer(
        _ open: String, _ close: String, _ count: Int, level: Int, into out: inout String,
        item: (Int, inout String) throws -> Void
    ) throws {
        guard count > 0 else {
            out += open + close
            return
        }
        out += open
        let newline = indent.map { "\n" + String(repeating: $0, count: level + 1) }
        for i in 0..<count {
            if i > 0 { out += itemSeparator }
            if let newline { out += newline }
            try item(i, &out)
            try JinjaBudget.checkLength(out.utf8.count, "JSON text")
        }
        if let indent { out += "\n" + String(repeating: indent, count: level) }
        out += close
    }

    /// Python converts non-string keys: `1` → "1", `1.5` → "1.5", `True` → "true",
    /// `None` → "null".
    private static func keyString(_ key: JinjaValue) throws -> String {
        switch key {
        case .string(let s): return s
        case .int(let i): return String(i)
        case .double(let d): return JinjaValue.pythonFloat(d)
        case .bool(let b): return b ? "true" : "false"
        case .none: return "null"
        default:
            throw JinjaError.render(
                "keys must be str, int, float, bool or None, not \(key.typeName)")
        }
    }

    /// A quoted JSON string: `ensure_ascii=False` escapes only quotes, backslashes and control
    /// characters; `ensure_ascii=True` also everything outside printable ASCII.
    private func writeString(_ s: String, into out: inout String) {
        // Printable ASCII without quotes or backslashes (most text) needs no escaping.
        if PythonText.needsNoEscaping(s, quote: 0x22) {
            out += "\"" + s + "\""
            return
        }
        let json = JSONValue.string(s)
        out += ensureASCII ? json.pythonJSONDump() : json.serialized()
    }
}

/// One token of a chat template, as Jinja2's lexer produces them: template data between tags,
/// the tag delimiters, and the names, literals and operators inside tags.
struct JinjaToken {
    enum Kind: Equatable {
        case data(String)
        case variableBegin, variableEnd, blockBegin, blockEnd
        case name(String)
        /// A string literal, escapes already resolved.
        case string(String)
        case integer(Int)
        case float(Double)
        /// An operator or punctuation: `+ - * / // % ** ~ == != < <= > >= = . : | , ; ( ) [ ] { }`.
        case op(String)
        case eof
    }

    var kind: Kind
    var line: Int
    var column: Int

    /// How Jinja names the token in a syntax error.
    var description: String {
        switch kind {
        case .data: "template data"
        case .variableBegin: "begin of print statement"
        case .variableEnd: "end of print statement"
        case .blockBegin: "begin of statement block"
        case .blockEnd: "end of statement block"
        case .name(let name): name
        case .string(let s): "string '\(s)'"
        case .integer(let i): "integer \(i)"
        case .float(let d): "float \(d)"
        case .op(let symbol): symbol
        case .eof: "end of template"
        }
    }

    func isName(_ name: String) -> Bool {
        if case .name(let n) = kind { return n == name }
        return false
    }

    func isOp(_ symbol: String) -> Bool {
        if case .op(let s) = kind { return s == symbol }
        return false
    }

    var nameValue: String? {
        if case .name(let n) = kind { return n }
        return nil
    }
}

extension Unicode.Scalar {
    /// Python's `str.isspace()` (and so the `\s` of Python's `re` on text), which Jinja uses for
    /// whitespace control and `trim`: ASCII whitespace, the separators U+001C–U+001F, NEL, and
    /// Unicode's space separators.
    var isPythonWhitespace: Bool {
        switch value {
        case 0x09...0x0D, 0x1C...0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029,
            0x202F, 0x205F, 0x3000:
            true
        default: false
        }
    }
}

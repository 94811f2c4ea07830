import PhiFormats

// How Python prints, compares and iterates values: what `{{ x }}` writes is `str(x)`, and
// containers print their items with `repr` (`['a', 1]`), so both are needed byte for byte.

extension JinjaValue {
    /// `str(value)`; an undefined value prints as "". Throws when the text would exceed the
    /// rendering budget (a list holding one long string four million times prints as
    /// petabytes) or the value nests deeper than any template needs.
    var pythonString: String {
        get throws {
            if case .string(let s) = self { return s }
            var printer = PythonPrinter()
            try printer.str(self)
            return printer.out
        }
    }

    /// `repr(value)`.
    var pythonRepr: String {
        get throws {
            var printer = PythonPrinter()
            try printer.repr(self)
            return printer.out
        }
    }
}

/// `str` and `repr` of values, bounded: the text stops at the budget's length, nesting at
/// `JinjaBudget.maxNesting`, and a namespace met again inside itself prints as Python's
/// recursion guard does (`<Namespace {...}>`), where it recursed until the stack overflowed.
private struct PythonPrinter {
    var out = ""
    private var depth = 0
    private var printing: Set<ObjectIdentifier> = []

    private mutating func append(_ text: String) throws {
        out += text
        if out.utf8.count > JinjaBudget.maxLength {
            throw JinjaBudget.exceeded("printing a value of more than \(JinjaBudget.maxLength) bytes")
        }
    }

    mutating func str(_ value: JinjaValue) throws {
        switch value {
        case .undefined: break
        case .string(let s): try append(s)
        case .none, .bool, .int, .double, .list, .tuple, .dict: try repr(value)
        case .namespace(let ns):
            let id = ObjectIdentifier(ns)
            guard !printing.contains(id) else { return try append("<Namespace {...}>") }
            printing.insert(id)
            defer { printing.remove(id) }
            try append("<Namespace ")
            try repr(.dict(ns.attributes))
            try append(">")
        case .loop(let loop): try append("<LoopContext \(loop.index0 + 1)/\(loop.items.count)>")
        case .function(let f): try append("<function \(f.name)>")
        }
    }

    mutating func repr(_ value: JinjaValue) throws {
        switch value {
        case .undefined: try append("Undefined")
        case .none: try append("None")
        case .bool(let b): try append(b ? "True" : "False")
        case .int(let i): try append(String(i))
        case .double(let d): try append(JinjaValue.pythonFloat(d))
        case .string(let s): try append(JinjaValue.pythonQuoted(s))
        case .list(let items): try sequence("[", items, "]")
        case .tuple(let items): try sequence("(", items, items.count == 1 ? ",)" : ")")
        case .dict(let d):
            try enter()
            defer { depth -= 1 }
            try append("{")
            for (i, item) in d.items.enumerated() {
                if i > 0 { try append(", ") }
                try repr(item.key)
                try append(": ")
                try repr(item.value)
            }
            try append("}")
        case .namespace, .loop, .function: try str(value)
        }
    }

    private mutating func sequence(_ open: String, _ items: [JinjaValue], _ close: String) throws {
        try enter()
        defer { depth -= 1 }
        try append(open)
        for (i, item) in items.enumerated() {
            if i > 0 { try append(", ") }
            try repr(item)
        }
        try append(close)
    }

    /// One level deeper (the caller steps back out).
    private mutating func enter() throws {
        guard depth < JinjaBudget.maxNesting else {
            throw JinjaBudget.tooDeep
        }
        depth += 1
    }
}

extension JinjaValue {
    /// `repr(float)`: shortest round-trip digits, Python's layout (`1.0`, `1e-05`, `1e+16`).
    static func pythonFloat(_ d: Double) -> String {
        if d.isNaN { return "nan" }
        if d.isInfinite { return d < 0 ? "-inf" : "inf" }
        guard case .number(let literal) = JSONValue.double(d) else { return "\(d)" }
        return literal
    }

    /// A string literal as Python's `repr` writes it: single quotes unless the text has a
    /// single quote and no double quote; backslash escapes for non-printable characters.
    static func pythonQuoted(_ s: String) -> String {
        // Printable ASCII without quotes or backslashes (most text) is quoted as it is.
        if PythonText.needsNoEscaping(s, quote: 0x27) {
            return "'" + s + "'"
        }
        let quote: Unicode.Scalar =
            s.unicodeScalars.contains("'") && !s.unicodeScalars.contains("\"") ? "\"" : "'"
        var out = String.UnicodeScalarView()
        out.append(quote)
        for scalar in s.unicodeScalars {
            switch scalar {
            case quote, "\\":
                out.append("\\")
                out.append(scalar)
            case "\n": out.append(contentsOf: "\\n".unicodeScalars)
            case "\r": out.append(contentsOf: "\\r".unicodeScalars)
            case "\t": out.append(contentsOf: "\\t".unicodeScalars)
            default:
                if scalar.isPythonPrintable {
                    out.append(scalar)
                } else {
                    let v = scalar.value
                    let (prefix, width) =
                        v < 0x100 ? ("\\x", 2) : v < 0x10000 ? ("\\u", 4) : ("\\U", 8)
                    let hex = String(v, radix: 16)
                    let padded = String(repeating: "0", count: width - hex.count) + hex
                    out.append(contentsOf: (prefix + padded).unicodeScalars)
                }
            }
        }
        out.append(quote)
        return String(out)
    }
}

extension Unicode.Scalar {
    /// Python's `str.isprintable()` for one character: everything but control, format,
    /// surrogate, private-use and unassigned characters and separators other than the space.
    var isPythonPrintable: Bool {
        if self == " " { return true }
        switch properties.generalCategory {
        case .control, .format, .surrogate, .privateUse, .unassigned, .spaceSeparator,
            .lineSeparator, .paragraphSeparator:
            return false
        default:
            return true
        }
    }
}

// MARK: - Equality and ordering

extension JinjaValue {
    /// The value as a number, if it is one (bools count: `true == 1` in Python).
    var numericValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// Python `==`.
    func pythonEquals(_ other: JinjaValue) -> Bool {
        switch (self, other) {
        case (.undefined, .undefined), (.none, .none): return true
        case (.string(let a), .string(let b)):
            return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.int(let a), .int(let b)): return a == b
        case (.list(let a), .list(let b)), (.tuple(let a), .tuple(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.pythonEquals($1) }
        case (.dict(let a), .dict(let b)):
            guard a.count == b.count else { return false }
            return a.items.allSatisfy { item in
                guard let other = try? b.value(for: item.key) else { return false }
                return item.value.pythonEquals(other)
            }
        case (.namespace(let a), .namespace(let b)): return a === b
        case (.loop(let a), .loop(let b)): return a === b
        default:
            if let a = numericValue, let b = other.numericValue { return a == b }
            return false
        }
    }

    /// Python's `<` (and friends, through it): numbers, strings by code point, sequences
    /// lexicographically; anything else is a TypeError.
    func pythonLess(_ other: JinjaValue, op: String = "<") throws -> Bool {
        switch (self, other) {
        case (.int(let a), .int(let b)): return a < b
        case (.string(let a), .string(let b)):
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
        case (.list(let a), .list(let b)), (.tuple(let a), .tuple(let b)):
            for (x, y) in zip(a, b) where !x.pythonEquals(y) { return try x.pythonLess(y, op: op) }
            return a.count < b.count
        default:
            if let a = numericValue, let b = other.numericValue { return a < b }
            throw JinjaError.render(
                "'\(op)' not supported between instances of '\(typeName)' and '\(other.typeName)'")
        }
    }

    func compare(_ op: JinjaComparison.Operator, _ other: JinjaValue) throws -> Bool {
        switch op {
        case .equal: return pythonEquals(other)
        case .notEqual: return !pythonEquals(other)
        case .less: return try pythonLess(other, op: "<")
        case .greater: return try other.pythonLess(self, op: ">")
        case .lessEqual: return try !other.pythonLess(self, op: "<=")
        case .greaterEqual: return try !pythonLess(other, op: ">=")
        case .contains: return try other.pythonContains(self)
        case .notContains: return try !other.pythonContains(self)
        }
    }

    /// Python's `item in self`: substring, list membership or dict key.
    func pythonContains(_ item: JinjaValue) throws -> Bool {
        switch self {
        case .string(let s):
            guard case .string(let needle) = item else {
                throw JinjaError.render(
                    "'in <string>' requires string as left operand, not \(item.typeName)")
            }
            return needle.isEmpty || s.unicodeScalars.containsSubsequence(needle.unicodeScalars)
        case .list(let items), .tuple(let items): return items.contains { $0.pythonEquals(item) }
        case .dict(let d): return try d.contains(item)
        case .undefined: return false
        default:
            throw JinjaError.render("argument of type '\(typeName)' is not iterable")
        }
    }
}

extension String.UnicodeScalarView {
    /// Whether `needle` occurs in this text (code point comparison, like Python's `in`).
    fileprivate func containsSubsequence(_ needle: String.UnicodeScalarView) -> Bool {
        firstRange(of: needle) != nil
    }
}

// MARK: - Iteration and size

extension JinjaValue {
    /// What `for x in value` walks: items, characters of a string, keys of a dict; nothing
    /// for an undefined value.
    func iterate() throws -> [JinjaValue] {
        switch self {
        case .list(let items), .tuple(let items): return items
        case .string(let s):
            // One boxed value per character: a 60 MB string made gigabytes of them.
            try JinjaBudget.checkItems(s.unicodeScalars.count, "the characters of a string")
            return s.unicodeScalars.map { .string(String($0)) }
        case .dict(let d): return d.keys
        case .undefined: return []
        default: throw JinjaError.render("'\(typeName)' object is not iterable")
        }
    }

    /// `len(value)`: code points of a string (not grapheme clusters), items, keys; 0 when
    /// undefined.
    func length() throws -> Int {
        switch self {
        case .string(let s): return s.unicodeScalars.count
        case .list(let items), .tuple(let items): return items.count
        case .dict(let d): return d.count
        case .undefined: return 0
        default: throw JinjaError.render("object of type '\(typeName)' has no len()")
        }
    }
}

/// An ordered, literal-preserving JSON value.
///
/// We parse JSON ourselves instead of using `JSONSerialization` because
/// (1) safetensors headers must reject duplicate keys, which `JSONSerialization` silently merges,
/// (2) `convert` rewrites `config.json` the way Python's `json.dump` does, which needs the key
///     order and the number literals exactly as the file had them.
///
/// Parsing lives in `JSONValue+Parse.swift`, writing in `JSONValue+Serialize.swift`.
public indirect enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case string(String)
    /// The number's literal text as written, e.g. `"1e-05"`, `"32064"`, `"10000.0"`.
    /// Two numbers are equal only if their literals are (`1.0` ≠ `1`).
    case number(String)
    case array([JSONValue])
    /// Members in insertion order.
    case object([(key: String, value: JSONValue)])

    /// Element-wise comparison; objects compare in order (tuples are not `Equatable`).
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.string(let a), .string(let b)): a == b
        case (.number(let a), .number(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.object(let a), .object(let b)):
            a.count == b.count && zip(a, b).allSatisfy { $0.key == $1.key && $0.value == $1.value }
        default: false
        }
    }
}

// MARK: - Building values

extension JSONValue {
    /// An integer number.
    public static func int(_ value: Int) -> JSONValue { .number(String(value)) }

    /// A floating-point number, formatted like Python's `repr(float)`:
    /// `1e-05`, `10000.0`, `0.0001`, `1e+16`. NaN and infinities become `NaN`, `Infinity`,
    /// `-Infinity` (what `json.dump` writes; not strict JSON).
    public static func double(_ value: Double) -> JSONValue { .number(pythonRepr(value)) }
}

// MARK: - Reading values

extension JSONValue {
    /// The value of the first member named `key`, if this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.first(where: { $0.key == key })?.value
    }

    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The integer value of an integer literal (`32064`, `-1`). Literals with a fraction or an
    /// exponent (`2.0`, `1e3`) return nil, as do integers that don't fit in `Int`: a shape of
    /// `[2.0]` is an error, not a 2.
    public var intValue: Int? {
        guard case .number(let literal) = self, Self.isIntegerLiteral(literal) else { return nil }
        return Int(literal)
    }

    /// Whether a number literal has neither a fraction nor an exponent (`32064`, `-0`; not
    /// `2.0` or `1e3`), whatever its size.
    static func isIntegerLiteral(_ literal: String) -> Bool {
        !literal.utf8.contains { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }
    }

    /// The value of any number literal as a `Double` (integers included).
    public var doubleValue: Double? {
        guard case .number(let literal) = self else { return nil }
        switch literal {
        case "NaN": return .nan
        case "Infinity": return .infinity
        case "-Infinity": return -.infinity
        default: return Double(literal)
        }
    }

    public var arrayValue: [JSONValue]? {
        if case .array(let a) = self { return a }
        return nil
    }

    public var objectValue: [(key: String, value: JSONValue)]? {
        if case .object(let o) = self { return o }
        return nil
    }
}

// MARK: - Editing objects

extension JSONValue {
    /// Replaces the member `key` in place, appends it if absent, or removes it when `value` is
    /// nil. Does nothing if this value is not an object.
    public mutating func set(_ key: String, _ value: JSONValue?) {
        guard case .object(var members) = self else { return }
        if let index = members.firstIndex(where: { $0.key == key }) {
            if let value {
                members[index].value = value
            } else {
                members.remove(at: index)
            }
        } else if let value {
            members.append((key: key, value: value))
        }
        self = .object(members)
    }

    /// The object with its top-level members sorted by key in code-point order (what Python's
    /// `sort_keys=True` does at each level; we only need the top one). Non-objects are unchanged.
    public func sortedKeys() -> JSONValue {
        guard case .object(let members) = self else { return self }
        // Stable sort so that (rejected-at-parse, but constructible) duplicate keys keep order.
        let sorted = members.enumerated().sorted { a, b in
            if a.element.key.unicodeScalars.elementsEqual(b.element.key.unicodeScalars) {
                return a.offset < b.offset
            }
            return a.element.key.unicodeScalars.lexicographicallyPrecedes(
                b.element.key.unicodeScalars)
        }
        return .object(sorted.map(\.element))
    }
}

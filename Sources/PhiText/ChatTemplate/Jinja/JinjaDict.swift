/// A Python dict: insertion-ordered (tool schemas are printed with `tojson` in their own key
/// order), keyed by hashable scalars with Python's equality (`1`, `1.0` and `true` are the
/// same key).
struct JinjaDict {
    private(set) var keys: [JinjaValue] = []
    private(set) var values: [JinjaValue] = []
    private var index: [Key: Int] = [:]

    /// The hashable identity of a key.
    enum Key: Hashable {
        case string(String)
        case number(Double)
        case none
    }

    static func key(for value: JinjaValue) throws -> Key {
        switch value {
        case .string(let s): return .string(s)
        case .int(let i): return .number(Double(i))
        case .double(let d): return .number(d)
        case .bool(let b): return .number(b ? 1 : 0)
        case .none: return .none
        case .tuple(let items):
            // Tuples of scalars are hashable in Python; fold them into a string key.
            let parts = try items.map { item -> String in
                "\(try key(for: item))"
            }
            return .string("\u{0}tuple(" + parts.joined(separator: ",") + ")")
        default:
            throw JinjaError.render("unhashable type: '\(value.typeName)'")
        }
    }

    var count: Int { keys.count }
    var isEmpty: Bool { keys.isEmpty }

    var items: [(key: JinjaValue, value: JinjaValue)] {
        Array(zip(keys, values)).map { (key: $0.0, value: $0.1) }
    }

    /// The value for a string key (the common case: JSON objects, keyword arguments).
    subscript(name: String) -> JinjaValue? {
        index[.string(name)].map { values[$0] }
    }

    func value(for key: JinjaValue) throws -> JinjaValue? {
        index[try Self.key(for: key)].map { values[$0] }
    }

    func contains(_ key: JinjaValue) throws -> Bool {
        index[try Self.key(for: key)] != nil
    }

    /// Sets a key, keeping its position if present and appending it otherwise.
    mutating func set(_ key: JinjaValue, _ value: JinjaValue) throws {
        insert(try Self.key(for: key), key, value)
    }

    /// Sets a string key (which is always hashable).
    mutating func set(_ name: String, _ value: JinjaValue) {
        insert(.string(name), .string(name), value)
    }

    private mutating func insert(_ k: Key, _ key: JinjaValue, _ value: JinjaValue) {
        if let i = index[k] {
            values[i] = value
        } else {
            index[k] = keys.count
            keys.append(key)
            values.append(value)
        }
    }
}

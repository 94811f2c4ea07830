import PhiFormats

/// Typed access to one JSON object of tokenizer.json (a normalizer, pre-tokenizer, …) that
/// names the field's path in every error (`pre_tokenizer.pretokenizers[0].pattern`).
struct ComponentReader {
    let value: JSONValue
    let path: String

    init(_ value: JSONValue, path: String) {
        self.value = value
        self.path = path
    }

    private func field(_ key: String) -> String { path.isEmpty ? key : path + "." + key }

    /// The `type` member, which selects the component.
    func type() throws(TokenizerBuildError) -> String {
        guard value.objectValue != nil else { throw .invalid(path, "expected an object") }
        guard let type = value["type"]?.stringValue else {
            throw .invalid(field("type"), "missing component type")
        }
        return type
    }

    func unsupported(_ kind: String) throws(TokenizerBuildError) -> Never {
        throw .unsupported(field("type"), "\(kind) '\((try? type()) ?? "?")'")
    }

    /// A member that may be absent or null.
    func optional(_ key: String) -> JSONValue? {
        guard let v = value[key], !v.isNull else { return nil }
        return v
    }

    func string(_ key: String) throws(TokenizerBuildError) -> String {
        guard let s = try optionalString(key) else { throw .invalid(field(key), "missing string") }
        return s
    }

    func optionalString(_ key: String) throws(TokenizerBuildError) -> String? {
        guard let v = optional(key) else { return nil }
        guard let s = v.stringValue else { throw .invalid(field(key), "expected a string") }
        return s
    }

    func bool(_ key: String, default fallback: Bool) throws(TokenizerBuildError) -> Bool {
        guard let v = optional(key) else { return fallback }
        guard let b = v.boolValue else { throw .invalid(field(key), "expected true or false") }
        return b
    }

    func int(_ key: String, default fallback: Int) throws(TokenizerBuildError) -> Int {
        guard let v = optional(key) else { return fallback }
        guard let i = v.intValue else { throw .invalid(field(key), "expected an integer") }
        return i
    }

    func object(_ key: String) throws(TokenizerBuildError) -> ComponentReader {
        guard let v = optional(key), v.objectValue != nil else {
            throw .invalid(field(key), "expected an object")
        }
        return ComponentReader(v, path: field(key))
    }

    func array(_ key: String) throws(TokenizerBuildError) -> [ComponentReader] {
        guard let items = optional(key)?.arrayValue else {
            throw .invalid(field(key), "expected an array")
        }
        return items.enumerated().map { ComponentReader($1, path: field(key) + "[\($0)]") }
    }

    /// A `{"String": …}` or `{"Regex": …}` pattern.
    func pattern(_ key: String) throws(TokenizerBuildError) -> SplitPattern {
        let p = try object(key)
        if let literal = try p.optionalString("String") { return .literal(Array(literal.utf8)) }
        guard let source = try p.optionalString("Regex") else {
            throw .invalid(field(key), "expected {\"String\": …} or {\"Regex\": …}")
        }
        do {
            return try SplitPattern.regex(source)
        } catch {
            throw .unsupported(
                field(key) + ".Regex", "regular expression (\(error.reason)): \(source)")
        }
    }

    /// A single character (Metaspace's `replacement`, Strip's `content`).
    func character(_ key: String) throws(TokenizerBuildError) -> String {
        let s = try string(key)
        guard s.unicodeScalars.count == 1 else {
            throw .invalid(field(key), "expected a single character, got '\(s)'")
        }
        return s
    }
}

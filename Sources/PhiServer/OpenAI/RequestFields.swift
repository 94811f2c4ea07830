import PhiFormats

/// The members of a request's JSON object, read with their expected types: a missing member
/// or `null` is nil, a member of another type is a 400 naming it (`'temperature' must be a
/// number`).
struct RequestFields {
    let object: JSONValue
    /// The path to this object in the request (`stream_options`), for error messages.
    let path: String

    init(body: [UInt8]) throws(APIError) {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: body)
        } catch {
            throw .invalidRequest(
                "We could not parse the JSON body of your request (\(error.message)).",
                code: "invalid_json")
        }
        guard case .object = value else {
            throw .invalidRequest("The request body must be a JSON object.", code: "invalid_json")
        }
        self.init(value, path: "")
    }

    init(_ object: JSONValue, path: String) {
        self.object = object
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    func value(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    func string(_ key: String) throws(APIError) -> String? {
        guard let value = value(key) else { return nil }
        guard let string = value.stringValue else { throw .invalidType(name(key), expected: "a string") }
        return string
    }

    func bool(_ key: String) throws(APIError) -> Bool? {
        guard let value = value(key) else { return nil }
        guard let bool = value.boolValue else { throw .invalidType(name(key), expected: "a boolean") }
        return bool
    }

    func int(_ key: String, in range: ClosedRange<Int>? = nil) throws(APIError) -> Int? {
        guard let value = value(key) else { return nil }
        guard let int = value.intValue else { throw .invalidType(name(key), expected: "an integer") }
        if let range, !range.contains(int) { throw outOfRange(key, range) }
        return int
    }

    func number(_ key: String, in range: ClosedRange<Double>? = nil) throws(APIError) -> Double? {
        guard let value = value(key) else { return nil }
        guard let number = value.doubleValue, number.isFinite else {
            throw .invalidType(name(key), expected: "a number")
        }
        if let range, !range.contains(number) { throw outOfRange(key, range) }
        return number
    }

    func array(_ key: String) throws(APIError) -> [JSONValue]? {
        guard let value = value(key) else { return nil }
        guard let array = value.arrayValue else { throw .invalidType(name(key), expected: "an array") }
        return array
    }

    func object(_ key: String) throws(APIError) -> RequestFields? {
        guard let value = value(key) else { return nil }
        guard case .object = value else { throw .invalidType(name(key), expected: "an object") }
        return RequestFields(value, path: name(key))
    }

    /// The elements of a list the request gives under `name` (`messages`, `input`), each of
    /// which must be an object: its fields, at the path `name[i]`.
    static func objects(_ list: [JSONValue], in name: String) throws(APIError) -> [RequestFields] {
        var result: [RequestFields] = []
        for (i, element) in list.enumerated() {
            let path = "\(name)[\(i)]"
            guard case .object = element else { throw .invalidType(path, expected: "an object") }
            result.append(RequestFields(element, path: path))
        }
        return result
    }

    private func outOfRange<T>(_ key: String, _ range: ClosedRange<T>) -> APIError {
        .invalidRequest(
            "'\(name(key))' must be between \(range.lowerBound) and \(range.upperBound)",
            param: name(key), code: "invalid_value")
    }
}

extension JSONValue {
    /// Message content as the model reads it: a string, or a list of text parts joined.
    /// Each API names its text parts (`text`; `input_text` and `output_text`); a part of
    /// another type (an image, a file) is a 400 naming it: this server's models read text.
    func joinedText(_ name: String, partTypes: Set<String>) throws(APIError) -> String {
        if let text = stringValue { return text }
        let types = partTypes.sorted().map { "\"\($0)\"" }.joined(separator: " or ")
        guard let parts = arrayValue else {
            throw .invalidType(name, expected: "a string or a list of \(types) parts")
        }
        var text = ""
        for (i, part) in parts.enumerated() {
            let type = part["type"]?.stringValue
            guard let type, partTypes.contains(type), let piece = part["text"]?.stringValue else {
                throw .invalidRequest(
                    "'\(name)[\(i)]' is a \(type.map { "\"\($0)\"" } ?? "untyped") part: this "
                        + "model reads text only (\(types) parts with \"text\")",
                    param: name, code: "unsupported_value")
            }
            text += piece
        }
        return text
    }
}

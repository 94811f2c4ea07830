#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A model's JSON metadata (config.json, generation_config.json, the shard index) is missing,
/// malformed, or describes a model phikit cannot run. `path` is the file as the caller named it,
/// so the message points at the exact file; `field` is the JSON key path joined with dots
/// (`rope_scaling.long_factor`), the spelling users see in the file.
public enum ConfigError: UserFacingError, Equatable {
    case missingFile(path: String)
    case invalidJSON(path: String, detail: String)
    case missingField(path: String, field: String)
    case invalidValue(path: String, field: String, detail: String)
    case unsupportedArchitecture(path: String, modelType: String)
    /// There but not readable as a file: a directory or FIFO in its place (65), or a read
    /// error (74) — the file's own `FileError`, so every metadata file says the same.
    case unreadable(FileError)

    public var message: String {
        switch self {
        case .unreadable(let error): error.message
        case .missingFile(let path), .invalidJSON(let path, _), .missingField(let path, _),
            .invalidValue(let path, _, _), .unsupportedArchitecture(let path, _):
            "\(path): \(problem)"
        }
    }

    /// The message without the file name in front, for callers that name the file themselves.
    public var problem: String {
        switch self {
        case .unreadable(let error):
            error.wrongType.map { "is \($0), not a regular file" }
                ?? "cannot be read: \(String(cString: strerror(error.errno)))"
        case .missingFile: "no such file"
        case .invalidJSON(_, let detail): "not valid JSON (\(detail))"
        case .missingField(_, let field): "missing field '\(field)'"
        case .invalidValue(_, let field, let detail): "field '\(field)' \(detail)"
        case .unsupportedArchitecture(_, let modelType):
            "model_type '\(modelType)' is not supported"
        }
    }

    public var hint: String? {
        switch self {
        case .missingFile: "is this a model directory? it needs config.json next to the weights"
        case .unsupportedArchitecture:
            "phikit supports model_type "
                + Architectures.modelTypes.map { "\"\($0)\"" }.joined(separator: ", ")
        default: nil
        }
    }

    public var exitCode: ExitCode {
        if case .missingFile = self { return .noInput }
        if case .unreadable(let error) = self { return error.exitCode }
        return .dataError
    }
}

extension ConfigError {
    /// Rewrites Foundation's DecodingError (whose description is a wall of debug text) as one
    /// line naming the JSON key path, like mlx-swift-lm's ModelFactoryError does.
    public static func wrapping(_ error: any Error, path: String) -> ConfigError {
        if let error = error as? ConfigError { return error }
        guard let decoding = error as? DecodingError else {
            return .invalidJSON(path: path, detail: "\(error)")
        }
        switch decoding {
        case .keyNotFound(let key, let context):
            return .missingField(path: path, field: dotted(context.codingPath + [key]))
        case .valueNotFound(let type, let context):
            return .invalidValue(
                path: path, field: dotted(context.codingPath),
                detail: "must be \(kind(type)), not null")
        case .typeMismatch(let type, let context):
            return .invalidValue(
                path: path, field: dotted(context.codingPath), detail: "must be \(kind(type))")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                let underlying = context.underlyingError.map { "\($0)" } ?? context.debugDescription
                return .invalidJSON(path: path, detail: underlying)
            }
            return .invalidValue(
                path: path, field: dotted(context.codingPath), detail: context.debugDescription)
        @unknown default:
            return .invalidJSON(path: path, detail: "\(decoding)")
        }
    }

    /// `rope_scaling.long_factor`, with array positions as `[3]`.
    static func dotted(_ path: [any CodingKey]) -> String {
        var out = ""
        for key in path {
            if let index = key.intValue,
                key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)"
            {
                out += "[\(index)]"
            } else {
                out += out.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return out.isEmpty ? "(root)" : out
    }

    /// "a number", "a string"… for the Swift type the decoder expected.
    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Double.Type, is Float.Type, is UInt64.Type, is Int64.Type: "a number"
        case is String.Type: "a string"
        case is Bool.Type: "true or false"
        case is [Any].Type, is [Double].Type, is [Int].Type: "a list"
        default:
            String(describing: type).hasPrefix("Array") ? "a list" : "an object"
        }
    }
}

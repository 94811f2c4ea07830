import Foundation
import PhiFormats

/// A model's `tokenizer_config.json`: the one place phikit reads it (the chat-template loader,
/// `run`'s stop tokens, `verify` and `convert` all go through here).
///
/// One error policy: a missing file is no config (`load` returns nil: base models and bare
/// tokenizers have none); a file that exists but cannot be read, is not JSON, is not an object
/// or has a field of the wrong shape is an error naming the file. Fields phikit does not use are
/// kept as they are (`members`).
public struct TokenizerConfig: Sendable {
    public static let fileName = "tokenizer_config.json"

    /// Where the config was read from.
    public let path: String
    /// The JSON object's members, in file order.
    public let members: [(key: String, value: JSONValue)]

    public init(path: String, members: [(key: String, value: JSONValue)]) {
        self.path = path
        self.members = members
    }

    /// `<directory>/tokenizer_config.json`; nil when there is no such file.
    public static func load(directory: String) throws(TokenizerConfigError) -> TokenizerConfig? {
        let path = URL(fileURLWithPath: directory).appendingPathComponent(fileName).path
        guard let members = try readJSONObject(path) else { return nil }
        return TokenizerConfig(path: path, members: members)
    }

    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }

    /// `eos_token`: a string, or an AddedToken object's `content`.
    public var eosToken: String? { token(named: "eos_token") }

    /// A special-token field (`bos_token`, `eos_token`, …) given as a string or as an
    /// AddedToken object `{"content": …}`; nil when absent, null or of another shape.
    public func token(named key: String) -> String? {
        guard let value = self[key] else { return nil }
        return value.stringValue ?? value["content"]?.stringValue
    }

    /// True when the config lists its added tokens (`added_tokens_decoder`): transformers then
    /// ignores special_tokens_map.json.
    public var hasAddedTokensDecoder: Bool { self["added_tokens_decoder"] != nil }

    /// The `chat_template` field as transformers reads it.
    public enum ChatTemplates: Sendable, Equatable {
        /// One template (a string).
        case single(String)
        /// Named templates, `[{"name": …, "template": …}]`, in file order.
        case named([NamedTemplate])
    }

    public struct NamedTemplate: Sendable, Equatable {
        public var name: String
        public var template: String
    }

    /// `chat_template`; nil when absent or null.
    public func chatTemplates() throws(TokenizerConfigError) -> ChatTemplates? {
        guard let value = self["chat_template"], !value.isNull else { return nil }
        if let text = value.stringValue { return .single(text) }
        guard let entries = value.arrayValue else {
            throw .invalid(
                path: path, message: "chat_template must be a string or a list of {name, template}")
        }
        var named: [NamedTemplate] = []
        for entry in entries {
            guard let name = entry["name"]?.stringValue, let text = entry["template"]?.stringValue
            else {
                throw .invalid(
                    path: path, message: "chat_template entries need a string 'name' and 'template'"
                )
            }
            named.append(NamedTemplate(name: name, template: text))
        }
        return .named(named)
    }

    /// The members of a JSON object file (tokenizer_config.json, special_tokens_map.json); nil
    /// if the file doesn't exist.
    static func readJSONObject(
        _ path: String
    ) throws(TokenizerConfigError) -> [(key: String, value: JSONValue)]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: [UInt8]
        do {
            data = try LocalFile.read(path)
        } catch {
            // A directory or FIFO in the file's place is bad model data (65) as for every
            // model file; a read error is I/O (74). Foundation said "error 256" for both.
            if let kind = error.wrongType {
                throw .invalid(path: path, message: "is \(kind), not a regular file")
            }
            throw .unreadable(path: path, detail: String(cString: strerror(error.errno)))
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw .invalid(path: path, message: "not valid JSON: \(error)")
        }
        guard let members = json.objectValue else {
            throw .invalid(path: path, message: "expected a JSON object")
        }
        return members
    }
}

/// tokenizer_config.json (or special_tokens_map.json) exists but cannot be used.
public enum TokenizerConfigError: UserFacingError, Equatable {
    case unreadable(path: String, detail: String)
    /// Not JSON, not an object, or a field of the wrong shape.
    case invalid(path: String, message: String)

    public var path: String {
        switch self {
        case .unreadable(let path, _), .invalid(let path, _): path
        }
    }

    /// The problem without the path.
    public var problem: String {
        switch self {
        case .unreadable(_, let detail): "cannot read: \(detail)"
        case .invalid(_, let message): message
        }
    }

    public var message: String { "\(path): \(problem)" }
    public var hint: String? { nil }

    public var exitCode: ExitCode {
        switch self {
        case .unreadable: .ioError
        case .invalid: .dataError
        }
    }
}

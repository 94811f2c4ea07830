import Foundation
import PhiFormats

extension ChatTemplate {
    /// The special tokens transformers passes to templates (`special_tokens_map`).
    static let specialTokenKeys = [
        "bos_token", "eos_token", "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
    ]

    /// The model's chat template, found the way transformers 5 finds it:
    /// 1. `chat_template.jinja` (and named `chat_templates/*.jinja`) beside the tokenizer — these
    ///    win over the config, as in `PreTrainedTokenizerBase.from_pretrained`;
    /// 2. else `tokenizer_config.json`'s `chat_template`: a string, or a list of
    ///    `{"name", "template"}` of which "default" is used.
    /// Nil when the model has none (base models such as the bundled stories-260k). Special
    /// tokens (strings or AddedToken objects `{"content": …}`) come from tokenizer_config.json,
    /// overridden by special_tokens_map.json when the config has no `added_tokens_decoder`
    /// (transformers' legacy rule).
    public static func load(modelDirectory: String) throws(ChatTemplateError) -> ChatTemplate? {
        let directory = URL(fileURLWithPath: modelDirectory)
        let configPath = directory.appendingPathComponent("tokenizer_config.json").path
        let config = try readJSONObject(configPath)
        var templates: [String: (source: String, origin: String)] = [:]

        let jinjaPath = directory.appendingPathComponent("chat_template.jinja").path
        if let text = try readText(jinjaPath) { templates["default"] = (text, jinjaPath) }
        let namedDirectory = directory.appendingPathComponent("chat_templates")
        let named =
            (try? FileManager.default.contentsOfDirectory(atPath: namedDirectory.path)) ?? []
        for file in named.sorted() where file.hasSuffix(".jinja") {
            let path = namedDirectory.appendingPathComponent(file).path
            if let text = try readText(path) { templates[String(file.dropLast(6))] = (text, path) }
        }
        if templates.isEmpty, let config {
            templates = try configTemplates(config, path: configPath)
        }
        guard !templates.isEmpty else { return nil }
        guard let chosen = templates["default"] else {
            let names = templates.keys.sorted().joined(separator: ", ")
            throw .invalidConfig(
                path: modelDirectory,
                message:
                    "the model has several chat templates (\(names)) and none is named 'default'")
        }
        let tokens = try specialTokens(
            config: config,
            mapPath: directory.appendingPathComponent("special_tokens_map.json").path)
        return try ChatTemplate(
            source: chosen.source, name: "default", specialTokens: tokens, origin: chosen.origin)
    }

    private static func configTemplates(
        _ config: [(key: String, value: JSONValue)], path: String
    ) throws(ChatTemplateError) -> [String: (source: String, origin: String)] {
        guard let value = config.first(where: { $0.key == "chat_template" })?.value, !value.isNull
        else {
            return [:]
        }
        if let text = value.stringValue { return ["default": (text, path)] }
        guard let entries = value.arrayValue else {
            throw .invalidConfig(
                path: path, message: "chat_template must be a string or a list of {name, template}")
        }
        var templates: [String: (source: String, origin: String)] = [:]
        for entry in entries {
            guard let name = entry["name"]?.stringValue, let text = entry["template"]?.stringValue
            else {
                throw .invalidConfig(
                    path: path, message: "chat_template entries need a string 'name' and 'template'"
                )
            }
            templates[name] = (text, "\(path) (chat_template '\(name)')")
        }
        return templates
    }

    private static func specialTokens(
        config: [(key: String, value: JSONValue)]?, mapPath: String
    ) throws(ChatTemplateError) -> [String: String] {
        var tokens: [String: String] = [:]
        func take(_ members: [(key: String, value: JSONValue)]) {
            for (key, value) in members where specialTokenKeys.contains(key) {
                if let text = value.stringValue ?? value["content"]?.stringValue {
                    tokens[key] = text
                } else if value.isNull {
                    tokens[key] = nil
                }
            }
        }
        if let config { take(config) }
        let hasDecoder = config?.contains { $0.key == "added_tokens_decoder" } ?? false
        if !hasDecoder, let map = try readJSONObject(mapPath) { take(map) }
        return tokens
    }

    /// The members of a JSON object file; nil if the file doesn't exist.
    private static func readJSONObject(
        _ path: String
    ) throws(ChatTemplateError) -> [(key: String, value: JSONValue)]? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .invalidConfig(path: path, message: "cannot read: \(error.localizedDescription)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: data)
        } catch {
            throw .invalidConfig(path: path, message: "not valid JSON: \(error)")
        }
        guard let members = json.objectValue else {
            throw .invalidConfig(path: path, message: "expected a JSON object")
        }
        return members
    }

    private static func readText(_ path: String) throws(ChatTemplateError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .invalidConfig(path: path, message: "cannot read the file")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .invalidConfig(path: path, message: "not valid UTF-8")
        }
        return text
    }
}

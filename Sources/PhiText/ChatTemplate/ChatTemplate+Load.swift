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
        let config: TokenizerConfig?
        do {
            config = try TokenizerConfig.load(directory: modelDirectory)
        } catch {
            throw .invalidConfig(path: error.path, message: error.problem)
        }
        return try load(modelDirectory: modelDirectory, tokenizerConfig: config)
    }

    /// As `load(modelDirectory:)`, with tokenizer_config.json already read (nil: the model
    /// has none).
    public static func load(
        modelDirectory: String, tokenizerConfig config: TokenizerConfig?
    ) throws(ChatTemplateError) -> ChatTemplate? {
        let directory = URL(fileURLWithPath: modelDirectory)
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
            templates = try configTemplates(config)
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
        _ config: TokenizerConfig
    ) throws(ChatTemplateError) -> [String: (source: String, origin: String)] {
        let field: TokenizerConfig.ChatTemplates?
        do {
            field = try config.chatTemplates()
        } catch {
            throw .invalidConfig(path: error.path, message: error.problem)
        }
        switch field {
        case nil: return [:]
        case .single(let text): return ["default": (text, config.path)]
        case .named(let entries):
            var templates: [String: (source: String, origin: String)] = [:]
            for entry in entries {
                templates[entry.name] = (
                    entry.template, "\(config.path) (chat_template '\(entry.name)')"
                )
            }
            return templates
        }
    }

    private static func specialTokens(
        config: TokenizerConfig?, mapPath: String
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
        if let config { take(config.members) }
        if !(config?.hasAddedTokensDecoder ?? false) {
            let map: [(key: String, value: JSONValue)]?
            do {
                map = try TokenizerConfig.readJSONObject(mapPath)
            } catch {
                throw .invalidConfig(path: error.path, message: error.problem)
            }
            if let map { take(map) }
        }
        return tokens
    }

    private static func readText(_ path: String) throws(ChatTemplateError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: [UInt8]
        do {
            data = try LocalFile.read(path)
        } catch {
            throw .invalidConfig(
                path: path,
                message: error.wrongType.map { "is \($0), not a regular file" }
                    ?? "cannot read the file: \(String(cString: strerror(error.errno)))")
        }
        guard let text = String(bytes: data, encoding: .utf8) else {
            throw .invalidConfig(path: path, message: "not valid UTF-8")
        }
        return text
    }
}

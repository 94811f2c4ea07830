import Foundation
import PhiFormats
import PhiText

/// The token a chat template closes an assistant turn with, and whether a loader stops there.
///
/// Found by rendering a short conversation (TextCheck's) and reading what follows the
/// assistant's words: the longest added token at that point (`<|end|>` for Phi-3, 3.5 and
/// 4-mini, whose templates write `…{{ content }}<|end|>`). A template that ends turns with
/// plain text (or no template) has none.
struct EndOfTurnToken {
    let content: String
    let id: Int

    static func find(directory: String, tokenizer: Tokenizer) throws -> EndOfTurnToken? {
        let tokenizerConfig = try TokenizerConfig.load(directory: directory)
        guard
            let template = try ChatTemplate.load(
                modelDirectory: directory, tokenizerConfig: tokenizerConfig)
        else { return nil }
        let prompt = try ChatPrompt.render(
            conversation: TextCheck.sampleConversation, template: template, tokenizer: tokenizer)
        guard let answer = TextCheck.sampleConversation[1]["content"]?.stringValue,
            let range = prompt.text.range(of: answer)
        else { return nil }
        let rest = prompt.text[range.upperBound...].drop { $0 == " " }
        let match = tokenizer.addedTokens.filter { !$0.content.isEmpty && rest.hasPrefix($0.content) }
            .max { $0.content.count < $1.content.count }
        return match.map { EndOfTurnToken(content: $0.content, id: $0.id) }
    }
}

/// The end-of-sequence ids MLX Swift and mlx-lm stop at for a model directory: config.json's
/// `eos_token_id` replaced by generation_config.json's when that has one, plus the tokenizer's
/// eos token (tokenizer_config.json).
enum LoaderStopTokens {
    static func ids(directory: String, tokenizer: Tokenizer) throws -> (ids: Set<Int>, file: String) {
        let config = try ModelConfig.load(directory: directory)
        var ids = Set(config.eosTokenIds)
        var file = "config.json"
        if let generation = try GenerationConfig.load(directory: directory),
            !generation.eosTokenIds.isEmpty
        {
            ids = Set(generation.eosTokenIds)
            file = "generation_config.json"
        }
        if let eos = try TokenizerConfig.load(directory: directory)?.eosToken,
            let id = tokenizer.tokenID(for: eos)
        {
            ids.insert(id)
        }
        return (ids, file)
    }

    /// Adds `id` to generation_config.json's `eos_token_id` (created from config.json's
    /// when the file or the field is missing), keeping every other field; atomic. What the
    /// MLX Swift tutorial does by hand with `extraEOSTokens: ["<|end|>"]`.
    static func add(_ id: Int, directory: String) throws {
        let path = directory + "/generation_config.json"
        var json: JSONValue = .object([])
        if let data = FileManager.default.contents(atPath: path) {
            json = try JSONValue(parsing: data)
        }
        var ids = try GenerationConfig.load(directory: directory)?.eosTokenIds ?? []
        if ids.isEmpty { ids = try ModelConfig.load(directory: directory).eosTokenIds }
        if !ids.contains(id) { ids.append(id) }
        json.set("eos_token_id", .array(ids.map { .number(String($0)) }))
        try AtomicFile.write(Array((json.pythonJSONDump(indent: 2) + "\n").utf8), to: path)
    }
}

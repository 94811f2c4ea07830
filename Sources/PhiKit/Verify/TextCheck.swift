import Foundation
import PhiFormats
import PhiHub
import PhiText

/// Layer 5: the text side. The tokenizer loads and its ids fit the embedding
/// (`vocab_size ≥` the tokenizer's size), the chat template (when there is one) renders a
/// sample conversation into tokens, and every stop token — config.json's and
/// generation_config.json's `eos_token_id`, the tokenizer's eos token, the registry's
/// `extraEOSTokens` — is a token of this tokenizer.
struct TextCheck {
    let directory: String
    let config: ModelConfig?
    let entry: RegistryEntry?
    private(set) var outcome = LayerOutcome(.text)
    private var notes: [String] = []

    /// A short conversation every Phi template must render.
    static let sampleConversation: [TemplateValue] = [
        .object([("role", .string("user")), ("content", .string("What is 2 + 2?"))]),
        .object([("role", .string("assistant")), ("content", .string("2 + 2 is 4."))]),
        .object([("role", .string("user")), ("content", .string("And 3 + 3?"))]),
    ]

    init(directory: String, config: ModelConfig?, entry: RegistryEntry?) {
        self.directory = directory
        self.config = config
        self.entry = entry
    }

    mutating func run() -> LayerOutcome {
        let tokenizer: Tokenizer
        do {
            tokenizer = try Tokenizer.load(directory: directory)
        } catch let error as any UserFacingError {
            let missing = !FileManager.default.fileExists(atPath: directory + "/tokenizer.json")
            outcome.error(
                missing ? "missing_tokenizer" : "invalid_tokenizer", file: "tokenizer.json",
                missing
                    ? "is missing: phikit reads tokenizers from tokenizer.json"
                    : StructureCheck.withoutPath(error.message, directory + "/tokenizer.json"))
            outcome.summary = "no usable tokenizer"
            return outcome
        } catch {
            outcome.error("invalid_tokenizer", file: "tokenizer.json", "\(error)")
            return outcome
        }
        notes.append("tokenizer \(tokenizer.vocabularySize) tokens")
        if let config {
            if tokenizer.vocabularySize > config.vocabSize {
                outcome.error(
                    "vocabulary_too_large", file: "tokenizer.json",
                    "has \(tokenizer.vocabularySize) tokens but the embedding only "
                        + "\(config.vocabSize) rows (config.json vocab_size)",
                    hint: "tokenizer.json belongs to another model")
            } else {
                notes[0] += " ≤ vocab_size \(config.vocabSize)"
            }
        }
        do {
            let tokenizerConfig = try TokenizerConfig.load(directory: directory)
            checkChatTemplate(tokenizer, tokenizerConfig)
            checkStopTokens(tokenizer, eosToken: tokenizerConfig?.eosToken)
        } catch {
            // The template's special tokens and the eos token live there: one finding for the
            // file, and the template is not tried.
            outcome.error("invalid_tokenizer_config", file: TokenizerConfig.fileName, error.problem)
            checkStopTokens(tokenizer, eosToken: nil)
        }
        outcome.summary = notes.joined(separator: "; ")
        return outcome
    }

    private mutating func checkChatTemplate(
        _ tokenizer: Tokenizer, _ tokenizerConfig: TokenizerConfig?
    ) {
        let template: ChatTemplate?
        do {
            template = try ChatTemplate.load(
                modelDirectory: directory, tokenizerConfig: tokenizerConfig)
        } catch {
            outcome.error(
                "invalid_chat_template", file: templateFile,
                StructureCheck.withoutPath(error.message, directory + "/" + templateFile))
            return
        }
        guard let template else {
            notes.append("no chat template (a base model)")
            return
        }
        do {
            let prompt = try ChatPrompt.render(
                conversation: Self.sampleConversation, template: template, tokenizer: tokenizer)
            notes.append("chat template renders (\(prompt.ids.count) tokens)")
        } catch {
            outcome.error("chat_template_render", file: templateFile, failure: error)
        }
    }

    /// Where the template lives: `chat_template.jinja`, else tokenizer_config.json.
    private var templateFile: String {
        FileManager.default.fileExists(atPath: directory + "/chat_template.jinja")
            ? "chat_template.jinja" : "tokenizer_config.json"
    }

    private mutating func checkStopTokens(_ tokenizer: Tokenizer, eosToken: String?) {
        var found: [Int: String] = [:]
        func checkID(_ id: Int, file: String, field: String) {
            if let token = tokenizer.token(for: id) {
                found[id] = token
            } else {
                outcome.error(
                    "missing_stop_token", file: file, tensor: nil,
                    "\(field) \(id) is not a token of tokenizer.json "
                        + "(\(tokenizer.vocabularySize) tokens)",
                    hint: "generation would never stop on it")
            }
        }
        func checkToken(_ token: String, file: String?, field: String) {
            if let id = tokenizer.tokenID(for: token) {
                found[id] = token
            } else {
                outcome.error(
                    "missing_stop_token", file: file,
                    "\(field) '\(token)' is not a token of tokenizer.json",
                    hint: "generation would not stop there; is tokenizer.json complete?")
            }
        }
        for id in config?.eosTokenIds ?? [] {
            checkID(id, file: "config.json", field: "eos_token_id")
        }
        do {
            for id in try GenerationConfig.load(directory: directory)?.eosTokenIds ?? [] {
                checkID(id, file: "generation_config.json", field: "eos_token_id")
            }
        } catch {
            outcome.error(
                "invalid_generation_config", file: "generation_config.json", error.problem)
        }
        if let eos = eosToken {
            checkToken(eos, file: TokenizerConfig.fileName, field: "eos_token")
        }
        for token in entry?.extraEOSTokens ?? [] {
            let source = entry.map { $0.source.isEmpty ? "registry.json" : $0.source }
            checkToken(token, file: source, field: "the registry's extraEOSTokens")
        }
        if found.isEmpty && !outcome.hasErrors {
            outcome.error(
                "no_stop_token",
                "no stop token: neither config.json, generation_config.json nor "
                    + "tokenizer_config.json names an end-of-sequence token",
                hint: "generation would only stop at the token limit")
        }
        let list = found.keys.sorted().map { "\(found[$0]!) \($0)" }.joined(separator: ", ")
        if !list.isEmpty { notes.append("stop tokens \(list)") }
    }
}

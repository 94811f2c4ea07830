import Foundation
import PhiEngine
import PhiFormats
import PhiHub
import PhiText

/// A model ready to generate: weights (memory-mapped), tokenizer, chat template, and what the
/// registry knows about it (default prompt, extra stop tokens). The library entry point for
/// apps, in the shape of MLX Swift's: load a container once, then generate from messages or
/// a prompt with parameters and a callback that receives text as it is produced.
///
///     let container = try ModelContainer.load("phi-3.5-mini")
///     let outcome = try container.generate(
///         .chat([ChatMessage(role: "user", content: "Hi")]),
///         parameters: GenerationParameters(maxTokens: 200, temperature: 0.7)
///     ) { text in
///         print(text, terminator: "")
///         return .more
///     }
///
/// Immutable after loading; each `generate` makes its own `InferenceSession`, and a chat or a
/// server keeps sessions of its own (`makeSession`) to reuse their caches across turns.
public final class ModelContainer: Sendable {
    /// Where the model was found (directory, name, registry entry).
    public let location: LocalModel
    /// The loaded weights, of whichever architecture config.json names.
    public let model: any CausalLanguageModel
    public let tokenizer: Tokenizer
    /// nil for base models (the bundled stories-260k): prompts are then plain text.
    public let chatTemplate: ChatTemplate?
    /// The tokenizer's end-of-sequence token (tokenizer_config.json `eos_token`).
    public let tokenizerEOS: Int?
    public let loadSeconds: Double
    /// How wide the activations are in every session made from this container (`--act-bits`).
    public let activationWidth: ActivationWidth
    /// The mlx-lm adapters loaded for run time, in the order the engine indexes them
    /// (`InferenceSession.adapter`): `--adapter-path`'s, then `serve --adapter`'s.
    public let adapters: [NamedAdapter]
    /// The adapter every session made here uses unless told otherwise (`--adapter-path`'s);
    /// nil: the base model.
    public let defaultAdapter: Int?
    /// The folder of the default adapter, if any.
    public var adapterDirectory: String? { defaultAdapter.map { adapters[$0].directory } }
    /// The tokens as bytes for structured output (`tokenVocabulary()`).
    let vocabularyCache = LazyValue<TokenVocabulary>()

    /// Finds MODEL as every command does (`ModelLocator`: directory, converted-model store,
    /// registry alias, Hub id in the cache) and loads it. A Hub model missing from the cache
    /// is pulled first when `pull` is given and `HF_HUB_OFFLINE` is not set; `pull` then
    /// receives the download's progress. `adapterPath`: an mlx-lm LoRA/DoRA adapter folder
    /// applied at run time (`RuntimeAdapter`) to every session; `adapters`: more that a
    /// session (a server's request) selects by name. `placement`: how a dense model's weights
    /// are held (`ModelArchitectures.load`); `cancellation` also stops a resident copy.
    public static func load(
        _ model: String, threads: Int? = nil, activationWidth: ActivationWidth = .int16,
        adapterPath: String? = nil, adapters: [NamedAdapter] = [],
        placement: WeightPlacement? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment,
        pull: ((PullProgress) -> Void)? = nil, cancellation: CancellationToken? = nil
    ) throws -> ModelContainer {
        let located =
            if let pull {
                try ModelLocator.locate(
                    model, environment: environment, pullingWith: pull,
                    cancellation: cancellation)
            } else {
                try ModelLocator.locate(model, environment: environment)
            }
        return try ModelContainer(
            located, threads: threads, activationWidth: activationWidth, adapterPath: adapterPath,
            adapters: adapters, placement: placement, cancellation: cancellation)
    }

    /// Loads the model in `located.directory`, with the adapter in `adapterPath` applied by
    /// default and `adapters` loaded for sessions that select them.
    public init(
        _ located: LocalModel, threads: Int? = nil, activationWidth: ActivationWidth = .int16,
        adapterPath: String? = nil, adapters named: [NamedAdapter] = [],
        placement: WeightPlacement? = nil, cancellation: CancellationToken? = nil
    ) throws {
        let start = DispatchTime.now().uptimeNanoseconds
        location = located
        self.activationWidth = activationWidth
        let all =
            (adapterPath.map {
                [NamedAdapter(name: ($0 as NSString).lastPathComponent, directory: $0)]
            } ?? []) + named
        if let twice = Dictionary(grouping: all, by: \.name).first(where: { $0.value.count > 1 }) {
            throw RunError.duplicateAdapterName(twice.key)
        }
        adapters = all
        defaultAdapter = adapterPath == nil ? nil : 0
        let config = all.isEmpty ? nil : try ModelConfig.load(directory: located.directory)
        model = try ModelArchitectures.load(
            directory: located.directory, threads: threads,
            adapters: all.map { try RuntimeAdapter.load(directory: $0.directory, config: config!) },
            placement: placement, cancellation: cancellation)
        tokenizer = try Tokenizer.load(directory: located.directory)
        chatTemplate = try ChatTemplate.load(modelDirectory: located.directory)
        guard tokenizer.vocabularySize <= model.vocabularySize else {
            throw RunError.tokenizerDoesNotFit(
                directory: located.directory, tokens: tokenizer.vocabularySize,
                embedding: model.vocabularySize)
        }
        tokenizerEOS = try TokenizerConfig.load(directory: located.directory)?.eosToken
            .flatMap(tokenizer.tokenID(for:))
        loadSeconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// The prompt's token ids. A chat (or a text, when the model has a chat template and
    /// `useChatTemplate`) is rendered with the template and the generation prompt, then
    /// encoded without the tokenizer's added tokens (`ChatPrompt`, as transformers'
    /// apply_chat_template); plain text is encoded with them (BOS for Phi-3 and stories-260k,
    /// so an empty text is the story's `<s>`).
    public func encode(_ prompt: RunPrompt, useChatTemplate: Bool = true) throws -> [Int] {
        let messages: [ChatMessage]
        switch prompt {
        case .text(let text, let system):
            // Cheap things first: a 50 MB prompt was tokenized in full (1.3 GB) before it was
            // found too long. No token of a real vocabulary spans 256 bytes on average.
            let limit = model.maxPositions.multipliedReportingOverflow(by: 256)
            if !limit.overflow, text.utf8.count > limit.partialValue {
                throw RunError.promptTooLong(bytes: text.utf8.count, positions: model.maxPositions)
            }
            guard let template = chatTemplate, useChatTemplate else {
                if system != nil {
                    throw RunError.systemNeedsTemplate(directory: location.directory)
                }
                return try tokenizer.encode(text, addSpecialTokens: true)
            }
            messages =
                (system.map { [ChatMessage(role: "system", content: $0)] } ?? [])
                + [ChatMessage(role: "user", content: text)]
            return try render(messages, template)
        case .chat(let chat):
            guard let template = chatTemplate else {
                throw ChatPromptError.noChatTemplate(directory: location.directory)
            }
            return try render(chat, template)
        }
    }

    private func render(_ messages: [ChatMessage], _ template: ChatTemplate) throws -> [Int] {
        let conversation = messages.map { m in
            TemplateValue.object([("role", .string(m.role)), ("content", .string(m.content))])
        }
        return try ChatPrompt.render(
            conversation: conversation, template: template, tokenizer: tokenizer
        ).ids
    }

    /// Everything that ends a reply: config.json's and generation_config.json's
    /// `eos_token_id`, the tokenizer's eos token, the registry's `extraEOSTokens` (skipped when
    /// this tokenizer lacks them) and `extra` (token strings or ids; unknown ones are an
    /// error).
    public func stopTokens(extra: [String] = []) throws -> StopTokens {
        var ids = (location.entry?.extraEOSTokens ?? []).compactMap(tokenizer.tokenID(for:))
        for token in extra {
            guard let id = Int(token) ?? tokenizer.tokenID(for: token),
                id >= 0, id < model.vocabularySize
            else { throw RunError.unknownStopToken(token) }
            ids.append(id)
        }
        return StopTokens(model: model, tokenizerEOS: tokenizerEOS, extra: ids)
    }
}

/// What to generate from.
public enum RunPrompt: Sendable, Equatable {
    /// A user message (and an optional system message); plain text for models without a
    /// chat template, or with `useChatTemplate` false.
    case text(String, system: String? = nil)
    /// A whole conversation; needs a chat template.
    case chat([ChatMessage])
}

/// A Hub model is not in the cache and `HF_HUB_OFFLINE` forbids fetching it: the usual
/// "run `phikit pull` first" would not help while the variable is set.
public struct OfflineModelMissing: UserFacingError {
    public var missing: ModelLocatorError
    public var message: String { missing.message }
    public var hint: String? {
        // A typo of a model in the cache is far likelier than a wish to download it.
        if case .notDownloaded(_, _, _, _, let suggestion?) = missing {
            return "did you mean '\(suggestion)'? HF_HUB_OFFLINE is set, so phikit does not "
                + "download models"
        }
        return "HF_HUB_OFFLINE is set, so phikit does not download it: unset HF_HUB_OFFLINE to "
            + "pull it"
    }
    public var exitCode: ExitCode { missing.exitCode }
}

/// A run-time adapter loaded with a model: the name a server's requests select it by
/// (`"adapter": NAME`, or NAME as the model) and the mlx-lm adapter folder it was read from.
public struct NamedAdapter: Sendable, Equatable {
    public let name: String
    public let directory: String

    public init(name: String, directory: String) {
        self.name = name
        self.directory = directory
    }
}

extension ModelContainer {
    /// The index (`InferenceSession.adapter`) of the adapter called `name`, if one is.
    public func adapterIndex(named name: String) -> Int? {
        adapters.firstIndex { $0.name == name }
    }
}

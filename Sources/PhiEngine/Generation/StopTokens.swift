import PhiFormats

/// The token ids that end generation: the union of config.json's `eos_token_id`,
/// generation_config.json's (a number or a list in either file), the tokenizer's eos token,
/// the registry's `extraEOSTokens` and the user's extra tokens. mlx-lm lets
/// generation_config override config; a union keeps every end marker either file names
/// (Phi-3.5: 32000 `<|endoftext|>` from config, 32007 `<|end|>` and 32001 from
/// generation_config), which is what a chat needs.
public struct StopTokens: Sendable, Equatable {
    public private(set) var ids: Set<Int>

    public init(_ ids: some Sequence<Int> = []) { self.ids = Set(ids) }

    /// Everything the model directory says, plus what the caller adds (the tokenizer's eos
    /// id, registry and CLI tokens already turned into ids).
    public init(
        config: ModelConfig, generationConfig: GenerationConfig?, tokenizerEOS: Int? = nil,
        extra: [Int] = []
    ) {
        var ids = Set(config.eosTokenIds)
        ids.formUnion(generationConfig?.eosTokenIds ?? [])
        if let tokenizerEOS { ids.insert(tokenizerEOS) }
        ids.formUnion(extra)
        self.ids = ids
    }

    /// The stop tokens a loaded model's own files name (config + generation_config).
    public init(model: any CausalLanguageModel, tokenizerEOS: Int? = nil, extra: [Int] = []) {
        self.init(
            config: model.config, generationConfig: model.generationConfig,
            tokenizerEOS: tokenizerEOS, extra: extra)
    }

    public func contains(_ id: Int) -> Bool { ids.contains(id) }

    public mutating func insert(_ id: Int) { ids.insert(id) }
}

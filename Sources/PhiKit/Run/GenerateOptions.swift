import PhiEngine

/// How `ModelContainer.generate` turns a prompt into a reply, beyond the sampling
/// `GenerationParameters`: the template, where it stops, the cache, and the hooks. Every
/// field has `run`'s default; set the ones wanted on the value.
public struct GenerateOptions {
    /// Render a text prompt through the model's chat template (`--no-chat-template`: raw).
    public var useChatTemplate = true
    /// Tokens that also end the reply, beside `ModelContainer.stopTokens` (`--extra-eos-token`).
    public var extraStopTokens: [String] = []
    /// Texts that end the reply and are not shown (`--stop`).
    public var stopStrings: [String] = []
    /// Width of the cached keys and values (`--kv-bits`).
    public var cacheWidth = KVCacheWidth.defaultForRun
    /// Positions the cache holds (`--max-kv-size`); nil: see `ModelContainer.generate`.
    public var maxContext: Int? = nil
    /// Limits the tokens (structured output).
    public var constraint: (any TokenConstraint)? = nil
    /// Proposes tokens to verify (speculative decoding; the same tokens greedy); without one,
    /// `speculation`'s prompt-lookup drafter when it is on.
    public var drafter: (any TokenDrafter)? = nil
    public var speculation = Speculation.default

    public init(constraint: (any TokenConstraint)? = nil, drafter: (any TokenDrafter)? = nil) {
        self.constraint = constraint
        self.drafter = drafter
    }
}

import PhiEngine

/// Speculative decoding as run, chat and serve offer it: prompt lookup
/// (`PromptLookupDrafter`: drafts copied from earlier in the context, verified in one forward
/// pass), at most `maxDraft` drafted tokens per step, 0 for off. Greedy answers are the same
/// tokens with or without it, and so are seeded sampled ones; only the speed changes.
public struct Speculation: Sendable, Equatable {
    public var maxDraft: Int

    public init(maxDraft: Int) { self.maxDraft = max(0, maxDraft) }

    public static let off = Speculation(maxDraft: 0)
    /// What run, chat and serve use unless told (`--draft-max`, `--no-speculative`): off
    /// until it is measured never slower on a quiet machine (scripts/bench/
    /// bench_speculative.py); the cost model then steps aside on new text by itself.
    public static let `default` = Speculation.off
    /// The draft length `--draft-max` suggests (verifying 9 tokens costs about 3 decode
    /// steps of a full-size model on 2 cores, issue 31).
    public static let suggested = Speculation(maxDraft: 8)
    /// The most `--draft-max` takes (verifying more on a CPU costs more than it can gain).
    public static let maxDraftLimit = 32

    public var isOn: Bool { maxDraft > 0 }

    /// The drafter and draft length a generation uses: `drafter` when the caller brings one
    /// (at the hooks' usual length), else a fresh prompt-lookup drafter when this is on.
    public func hooks(drafter: (any TokenDrafter)?) -> (drafter: (any TokenDrafter)?, draftLength: Int) {
        if let drafter { return (drafter, GenerationHooks().draftLength) }
        guard isOn else { return (nil, 0) }
        return (PromptLookupDrafter(maxDraft: maxDraft), maxDraft)
    }
}

import PhiEngine

/// Speculative decoding as run, chat and serve offer it: prompt lookup
/// (`PromptLookupDrafter`: drafts copied from earlier in the context, verified in one forward
/// pass), at most `maxDraft` drafted tokens per step, 0 for off. Greedy answers are the same
/// tokens with or without it, and so are seeded sampled ones; only the speed changes.
public struct Speculation: Sendable, Equatable {
    public var maxDraft: Int

    public init(maxDraft: Int) { self.maxDraft = max(0, maxDraft) }

    public static let off = Speculation(maxDraft: 0)
    /// The draft length `--draft-max` suggests (verifying 9 tokens costs about 3 decode
    /// steps of a full-size model on 2 cores, issue 31).
    public static let suggested = Speculation(maxDraft: 8)
    /// What one sequence (run, chat, the library's generate) uses unless told (`--draft-max`,
    /// `--no-speculative`): on. Measured on a quiet machine (scripts/bench/README.md,
    /// SmolLM2): quoting 2.04x, editing 1.27x, extracting 1.19x, new prose 1.02x — the
    /// cost model steps aside on new text by itself, so it is not slower there.
    public static let `default` = Speculation.suggested
    /// What `serve` uses unless told: on, as run's. Drafts are verified inside the batched
    /// decode step, priced by what the batch's steps measure (`BatchVerifyCost`): a slot
    /// drafts when the step's tokens grow more than its time, so with several clients on a
    /// compute-bound machine it mostly does not, and alone it drafts as `run` does.
    public static let serveDefault = Speculation.suggested
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

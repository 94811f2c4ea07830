/// Drafts without a second model (prompt lookup): when the text just generated also occurs
/// earlier in the context — in the prompt being edited or quoted, or earlier in the answer —
/// it proposes what followed there. The context is indexed by a suffix automaton as it grows,
/// so finding the longest earlier match costs the same at any length.
///
/// How much to propose comes from a `DraftCostModel`: the verify cost of each block length
/// as this drafter measures it (the time between consecutive `draft` calls is the time the
/// previous proposal took to verify, plus the sampling around it), and the share of drafted
/// tokens kept per match length. In new text matches are short and rarely right, so it
/// proposes nothing and generation runs as without it.
///
/// One instance per sequence, on one thread (`TokenDrafter`).
public final class PromptLookupDrafter: TokenDrafter {
    /// Tokens one proposal holds at most.
    public let maxDraft: Int
    /// Drafted and accepted tokens over this drafter's life (for `--stats` and `usage`).
    public private(set) var drafted = 0
    public private(set) var accepted = 0

    private var index = SuffixAutomaton()
    private var costs: DraftCostModel
    /// The last proposal: its length and match class, and when it was made.
    private var lastLength = 0
    private var lastClass: Int?
    private var lastCall: Double?
    private let clock: () -> Double

    /// Matches of at least this many tokens are continued from their latest earlier
    /// occurrence, shorter ones from their first. A long match is a text repeating itself
    /// with variations (a model writing one function after another, nested JSON growing its
    /// indentation), best continued by its last round; a short one is weak evidence, and the
    /// first place it occurs is usually the prompt, what copying draws from. Simulated over
    /// SmolLM2's greedy answers with its measured verify cost (scripts/bench/README.md):
    /// edit 1.46x → 1.56x, extract 1.11x → 1.14x, the rest unchanged; latest at every length
    /// gave edit 1.60x but lost stories-260k's short matches (1.04x → 0.99x).
    static let latestFrom = 4

    /// `maxDraft`: the longest proposal (verification takes it plus one token as a block).
    public convenience init(maxDraft: Int = 8) {
        self.init(maxDraft: maxDraft, clock: monotonicSeconds)
    }

    /// With a clock of the caller's (tests drive the cost model with made-up timings).
    init(maxDraft: Int, clock: @escaping () -> Double) {
        self.maxDraft = max(0, maxDraft)
        self.clock = clock
        costs = DraftCostModel(maxBlock: self.maxDraft + 1)
    }

    public func draft(after tokens: [Int], limit: Int) -> [Int] {
        let now = clock()
        if let lastCall { costs.recordBlock(tokens: lastLength + 1, seconds: now - lastCall) }
        lastCall = now
        return propose(after: tokens, limit: limit) { [costs] in
            costs.bestLength(matchClass: $0, limit: $1)
        }
    }

    /// In a batched step the time between calls is the whole batch's, so the batch's own
    /// measurements price the draft (`BatchVerifyCost`); this drafter's block timings wait
    /// for it to run alone again. A strong match may draft a little where the batch has not
    /// measured its rows, so the curve gets measured where drafts would go.
    public func draft(after tokens: [Int], limit: Int, in batch: BatchDraftContext) -> [Int] {
        lastCall = nil
        return propose(after: tokens, limit: limit) { [costs] matchClass, limit in
            let best = costs.bestLength(
                matchClass: matchClass, limit: limit, otherTokens: batch.otherTokens,
                cost: batch.cost)
            guard best == 0, limit > 0, costs.acceptance(matchClass: matchClass) >= Self.exploreAbove,
                batch.costs.mayExplore(rows: batch.otherRows + 2)
            else { return best }
            return 1
        }
    }

    /// The least share of drafts kept at which a match may draft to measure the batch's cost.
    static let exploreAbove = 0.6

    /// What followed the longest earlier match of the context's end, `length(class, limit)`
    /// tokens of it.
    private func propose(
        after tokens: [Int], limit: Int, length: (Int, Int) -> Int
    ) -> [Int] {
        lastLength = 0
        lastClass = nil
        sync(tokens)
        guard let match = index.earlierMatch, let matchClass = DraftCostModel.matchClass(match.length)
        else { return [] }
        let end = match.length >= Self.latestFrom ? match.latestEnd : match.end
        let available = index.text.count - (end + 1)
        let count = length(matchClass, min(limit, maxDraft, available))
        guard count > 0 else { return [] }
        lastLength = count
        lastClass = matchClass
        return Array(index.text[(end + 1)..<(end + 1 + count)])
    }

    public func observe(drafted count: Int, accepted kept: Int) {
        drafted += count
        accepted += kept
        if let lastClass {
            costs.recordDraft(matchClass: lastClass, drafted: count, accepted: kept)
        }
        // a proposal the generator cut short was verified at the length it kept
        if count < lastLength { lastLength = count }
    }

    /// Brings the index up to `tokens`: appends what is new, or starts over when `tokens` is
    /// not a continuation of what was indexed (another sequence, an edited history).
    private func sync(_ tokens: [Int]) {
        let known = index.text.count
        if tokens.count < known
            || (known > 0
                && (tokens[known - 1] != index.text[known - 1] || tokens[0] != index.text[0]))
        {
            index.removeAll()
        }
        for token in tokens[index.text.count...] { index.append(token) }
    }
}

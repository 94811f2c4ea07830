/// How many drafted tokens are worth verifying, from what verification costs on this machine
/// and how often drafts have been right.
///
/// A block of n tokens (the token just chosen and n - 1 drafted ones) costs `cost(n)` decode
/// steps: about one while the weights' streaming dominates, growing once the block's
/// arithmetic does (on 2 cores a full-size Phi is ~1 step at n = 3 and ~3 at n = 9, issue 31).
/// With each drafted token kept with probability a (given the ones before it were), a draft
/// of k yields 1 + a + … + a^k tokens per block; the model picks the k with the most tokens
/// per step, 0 — no draft — unless drafting is expected to be faster by a margin.
///
/// Both inputs are measured as generation runs: the seconds each block took (the caller
/// reports them), and per class of evidence — how long the context match behind the draft
/// is — the share of drafted tokens kept, forgetting old outcomes so the model follows the
/// text from quoting into new prose and back.
struct DraftCostModel {
    /// Blocks of up to this many tokens are modelled.
    let maxBlock: Int
    /// Expected gain a draft must promise over a plain step.
    static let margin = 1.05
    /// Weight of an outcome `decay` observations ago: decay^age.
    static let decay = 0.85

    /// Cost in decode steps of a block of n tokens (index n - 1) before any is measured: the
    /// shape measured on 2 cores (engine-bench --verify) — flat while weights stream, then
    /// about a third of a step per token.
    static func priorCost(_ n: Int) -> Double { max(1 + 0.08 * Double(n - 1), Double(n) / 3) }

    /// Seconds per block of n tokens (index n - 1): a running mean, nil until measured.
    private var seconds: [Double?]
    /// Drafted tokens kept and tried (a rejection is a try), per match-length class and over
    /// all classes, older outcomes weighing less.
    private var kept: [Double]
    private var tried: [Double]
    private var keptInAll = priorWeight * 0.5
    private var triedInAll = priorWeight

    /// Match lengths of each class's lower end; a match of at least 2 tokens is needed.
    static let classStarts = [2, 3, 4, 6, 10, 18]
    /// What each class's share is believed before any outcome.
    static let priorShares = [0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    /// How many tokens' worth of outcomes the belief a class starts from weighs.
    static let priorWeight = 2.0

    init(maxBlock: Int) {
        self.maxBlock = max(1, maxBlock)
        seconds = Array(repeating: nil, count: self.maxBlock)
        kept = Self.priorShares.map { _ in 0 }
        tried = Self.priorShares.map { _ in 0 }
    }

    /// The class of a context match of `length` tokens; nil below the first class.
    static func matchClass(_ length: Int) -> Int? {
        classStarts.lastIndex { length >= $0 }
    }

    /// A block of `tokens` took `elapsed` seconds. Outliers (a pause in the caller) count
    /// as at most three times the running mean.
    mutating func recordBlock(tokens n: Int, seconds elapsed: Double) {
        guard n >= 1, n <= maxBlock, elapsed > 0 else { return }
        if let mean = seconds[n - 1] {
            seconds[n - 1] = 0.8 * mean + 0.2 * min(elapsed, 3 * mean)
        } else {
            seconds[n - 1] = elapsed
        }
    }

    /// A draft from match class `matchClass` of `drafted` tokens had its first `accepted`
    /// kept: `accepted` tokens kept, and one rejected unless all were kept.
    mutating func recordDraft(matchClass c: Int, drafted: Int, accepted: Int) {
        guard drafted > 0, c >= 0, c < kept.count else { return }
        let rejected = accepted < drafted ? 1.0 : 0.0
        kept[c] = kept[c] * Self.decay + Double(accepted)
        tried[c] = tried[c] * Self.decay + Double(accepted) + rejected
        keptInAll = keptInAll * Self.decay + Double(accepted)
        triedInAll = triedInAll * Self.decay + Double(accepted) + rejected
    }

    /// The share of drafted tokens kept for a match of class `c`: the class's own outcomes,
    /// with a belief as strong as `priorWeight` tokens halfway between the class's prior and
    /// what all classes show now — so a text that quotes well lifts classes not yet tried,
    /// and one that does not lowers them.
    func acceptance(matchClass c: Int) -> Double {
        let belief = 0.5 * Self.priorShares[c] + 0.5 * keptInAll / triedInAll
        return (kept[c] + Self.priorWeight * belief) / (tried[c] + Self.priorWeight)
    }

    /// Cost of a block of n tokens in decode steps: measured blocks as measured (against a
    /// measured step), the rest as the prior's shape scaled to the measured ones.
    func cost(_ n: Int) -> Double {
        guard let step = seconds[0] else { return Self.priorCost(n) }
        if n == 1 { return 1 }
        if let measured = seconds[n - 1] { return max(1, measured / step) }
        // scale the prior's excess over one step by what the measured blocks showed
        var measuredExcess = 0.0
        var priorExcess = 0.0
        for m in 2...maxBlock {
            if let s = seconds[m - 1] {
                measuredExcess += max(0, s / step - 1)
                priorExcess += Self.priorCost(m) - 1
            }
        }
        let scale = priorExcess > 0 ? max(0.25, measuredExcess / priorExcess) : 1
        return 1 + scale * (Self.priorCost(n) - 1)
    }

    /// The draft length (0…`limit`) with the most expected tokens per decode step for a
    /// match of class `c`; 0 when no length beats a plain step by `margin`.
    func bestLength(matchClass c: Int, limit: Int) -> Int {
        bestLength(matchClass: c, limit: limit, otherTokens: 0, cost: cost)
    }

    /// The draft length for a sequence in a batched step: one whose other sequences produce
    /// `otherTokens` tokens per step, with `cost(n)` the step's time when this sequence feeds
    /// n tokens, in plain steps. A draft must raise the step's tokens per time by `margin`
    /// (alone: otherTokens 0, this sequence's own block costs).
    func bestLength(
        matchClass c: Int, limit: Int, otherTokens: Double, cost: (Int) -> Double
    ) -> Int {
        let a = acceptance(matchClass: c)
        var best = 0
        var bestRate = Self.margin * (otherTokens + 1)
        var expected = otherTokens + 1  // others' tokens and 1 + a + … + a^k
        var power = 1.0
        for k in stride(from: 1, through: min(limit, maxBlock - 1), by: 1) {
            power *= a
            expected += power
            let rate = expected / cost(k + 1)
            if rate > bestRate {
                best = k
                bestRate = rate
            }
        }
        return best
    }
}

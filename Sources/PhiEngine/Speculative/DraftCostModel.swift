import CKernels

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

    /// Seconds per block of n tokens (index n - 1): a running mean, nil until measured; and
    /// how many blocks of each length it has seen.
    private var seconds: [Double?]
    private var samples: [Int]
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
        samples = Array(repeating: 0, count: self.maxBlock)
        kept = Self.priorShares.map { _ in 0 }
        tried = Self.priorShares.map { _ in 0 }
    }

    /// The class of a context match of `length` tokens; nil below the first class.
    static func matchClass(_ length: Int) -> Int? {
        classStarts.lastIndex { length >= $0 }
    }

    /// A block of `tokens` took `elapsed` seconds: the mean of a length's first 5 blocks,
    /// then a running mean, outliers (a preempted block, a pause in the caller) counting as
    /// at most three times the mean. (Following the faster times more, the lower envelope,
    /// biased the price against drafting: the step, timed far more often, got the lower one.)
    mutating func recordBlock(tokens n: Int, seconds elapsed: Double) {
        guard n >= 1, n <= maxBlock, elapsed > 0 else { return }
        samples[n - 1] += 1
        if let mean = seconds[n - 1] {
            let weight = max(0.2, 1 / Double(samples[n - 1]))
            seconds[n - 1] = mean + weight * (min(elapsed, 3 * mean) - mean)
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

    /// Tokens the matrix kernels compute together (`PK_MATVEC_TOKENS`): a longer block goes
    /// over every weight again for each further group, so its cost jumps there (SmolLM2 on
    /// one thread: 8 tokens 4.8 steps, 9 tokens 5.8).
    static let kernelTokens = Int(PK_MATVEC_TOKENS)

    /// How many blocks' worth of evidence the prior's cost at each length weighs in the fit.
    static let priorFitWeight = 0.25

    /// Whether a plain decode step has been timed: block costs are relative to it.
    var knowsStep: Bool { seconds[0] != nil }

    /// Cost of a block of n tokens in decode steps: lengths measured twice or more as
    /// measured (against a measured step); the others on the line through one step at n = 1
    /// that fits the measured blocks of one kernel group (least squares, a length weighing
    /// as its blocks, up to 4), and a block longer than a group as its groups' costs added.
    /// Before a step and a block are measured: the prior. (Under load one block of 8 took
    /// 5.4 steps where the others took 3.6, and priced alone it kept drafts short for the
    /// rest of the answer.)
    ///
    /// A line, not the prior's shape scaled: the prior is a full-size model's (flat, then
    /// rising), and on a model as small as SmolLM2 every token costs from the first (~0.45
    /// step); scaled from one measured block the prior priced blocks of 9 at 3x the measured
    /// slope, so the drafter stayed at blocks of 4 on text it copied whole (quote: 3 drafted
    /// tokens a block, 112 of 115 kept). A line extrapolated from the blocks measured is
    /// tried where it promises more, and measured there.
    func cost(_ n: Int) -> Double {
        guard let step = seconds[0] else { return Self.priorCost(n) }
        if n <= 1 { return 1 }
        if let measured = seconds[n - 1], samples[n - 1] >= 2 { return max(1, measured / step) }
        let group = Self.kernelTokens
        if n > group { return cost(group) + cost(n - group) }
        var weighted = 0.0
        var squares = 0.0
        var measured = false
        for m in stride(from: 2, through: min(maxBlock, group), by: 1) {
            let width = Double((m - 1) * (m - 1))
            // the prior is a quarter block of evidence at each length: one slow block alone
            // (preempted) priced every draft above a step, and with no draft nothing was
            // measured again
            weighted += Self.priorFitWeight * (Self.priorCost(m) - 1) * Double(m - 1)
            squares += Self.priorFitWeight * width
            guard let s = seconds[m - 1] else { continue }
            let weight = Double(min(samples[m - 1], 4))
            weighted += weight * (max(1, s / step) - 1) * Double(m - 1)
            squares += weight * width
            measured = true
        }
        guard measured else { return Self.priorCost(n) }
        return 1 + weighted / squares * Double(n - 1)
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

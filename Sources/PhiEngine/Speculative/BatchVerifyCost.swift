/// What a draft costs inside a batched step (a server's continuous batching, `DecodeBatch`),
/// measured as the server runs: the seconds a step of R token rows in all takes, for every R
/// seen. A sequence drafting k tokens in a step whose other sequences bring `otherRows` rows
/// (and `otherTokens` tokens: about one each) turns a step of otherRows + 1 rows into one of
/// otherRows + 1 + k, so it pays when the step's tokens grow by more than its time: a
/// `BatchDraftContext` prices a draft that way for the `PromptLookupDrafter` of each sequence.
///
/// On 2 cores a step streams the weights once whatever its rows until the rows' arithmetic
/// dominates (issue 31: a full-size Phi's decode step ≈ 3 rows of compute, its 4-client step
/// already compute-bound with 16-bit activations; 8-bit activations move the knee further),
/// and fixed per-step work (sampling, streaming the text) makes a row cheaper still. Row
/// counts not yet measured are priced by the line through the measured ones (by the prior's
/// shape while fewer than two are), and now and then a strong match drafts a little past
/// what is measured, so the curve is learnt where it matters.
///
/// One instance per batch, used on the batch's thread.
public final class BatchVerifyCost {
    /// Steps of up to this many rows are modelled.
    public let maxRows: Int
    /// Seconds per step of n rows (index n - 1): a running mean, nil until measured.
    private var seconds: [Double?]
    /// Steps since each row count was last measured (a measurement grows stale as the
    /// machine's load changes).
    private var age: [Int]
    /// Decisions since the last exploring draft.
    private var sinceExplored = 0
    /// One decision in this many may draft past the measured row counts.
    static let exploreEvery = 16
    /// A measurement older than this many steps is explored again.
    static let staleAfter = 512

    public init(maxRows: Int) {
        self.maxRows = max(1, maxRows)
        seconds = Array(repeating: nil, count: self.maxRows)
        age = Array(repeating: Int.max / 2, count: self.maxRows)
    }

    /// A batched step of `rows` token rows took `elapsed` seconds (its forward pass and the
    /// sequences' choices after it). Outliers count as at most three times the running mean.
    public func record(rows n: Int, seconds elapsed: Double) {
        for i in age.indices { age[i] += 1 }
        guard n >= 1, n <= maxRows, elapsed > 0 else { return }
        if let mean = seconds[n - 1] {
            seconds[n - 1] = 0.8 * mean + 0.2 * min(elapsed, 3 * mean)
        } else {
            seconds[n - 1] = elapsed
        }
        age[n - 1] = 0
    }

    /// Estimated seconds (or, before anything is measured, decode steps) of a step of n
    /// rows: as measured, else on the least-squares line through the measured counts (never
    /// below the largest measured count under n), else the prior's shape through the one
    /// measured count.
    func estimate(_ n: Int) -> Double {
        let n = min(max(n, 1), maxRows)
        if let measured = seconds[n - 1] { return measured }
        let points = seconds.enumerated().compactMap { i, s in s.map { (Double(i + 1), $0) } }
        guard let nearest = points.min(by: { abs($0.0 - Double(n)) < abs($1.0 - Double(n)) }) else {
            return DraftCostModel.priorCost(n)
        }
        let floor = points.filter { $0.0 < Double(n) }.map(\.1).max() ?? 0
        guard points.count >= 2 else {
            return max(floor, nearest.1 * DraftCostModel.priorCost(n) / DraftCostModel.priorCost(Int(nearest.0)))
        }
        let count = Double(points.count)
        let meanX = points.reduce(0) { $0 + $1.0 } / count
        let meanY = points.reduce(0) { $0 + $1.1 } / count
        let sxx = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        let sxy = points.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
        let slope = max(0, sxy / sxx)
        return max(floor, nearest.1 + slope * (Double(n) - nearest.0), 1e-9)
    }

    /// Whether a draft that would make a step of `rows` rows may be tried to measure it:
    /// that count is unmeasured or stale, and no other draft explored lately.
    func mayExplore(rows: Int) -> Bool {
        guard rows <= maxRows, age[rows - 1] > Self.staleAfter else { return false }
        sinceExplored += 1
        guard sinceExplored >= Self.exploreEvery else { return false }
        sinceExplored = 0
        return true
    }
}

/// Where one sequence's next draft goes: a batched step in which the other sequences bring
/// `otherRows` token rows and produce about `otherTokens` tokens, its time as `costs` measure
/// it. A draft of k is worth it when (otherTokens + the tokens it is expected to give) per
/// step time beats otherTokens + 1 per the plain step's time (`DraftCostModel.bestLength`).
public struct BatchDraftContext {
    public let costs: BatchVerifyCost
    public let otherRows: Int
    public let otherTokens: Double

    public init(costs: BatchVerifyCost, otherRows: Int, otherTokens: Double) {
        self.costs = costs
        self.otherRows = otherRows
        self.otherTokens = otherTokens
    }

    /// Cost of this sequence feeding n tokens, in plain steps of the batch (n = 1: 1).
    func cost(_ n: Int) -> Double {
        costs.estimate(otherRows + n) / costs.estimate(otherRows + 1)
    }
}

import Foundation

/// What one model scored over the evaluated positions, accumulated a logit row at a time in
/// float64 (the rows are the engine's float32 logits):
/// - perplexity: `exp(mean(logsumexp(l) - l[target]))`;
/// - against a reference row r: the KL divergence `Σ softmax(r)·(log softmax(r) − log
///   softmax(l))` (mean, and its 99th percentile, numpy's linear interpolation between
///   order statistics), top-1 agreement (the same argmax; the first maximum on ties, as
///   numpy's argmax) and the mean over the vocabulary of |l − r|.
/// llama.cpp's `llama-perplexity --kl-divergence` reports the same KL and top-1 figures.
struct EvalAccumulator {
    private(set) var positions = 0
    private var negativeLogLikelihood = 0.0
    private var divergences: [Double] = []
    private var agreements = 0
    private var absoluteDifference = 0.0

    /// Adds the position whose logits are `row` and whose next token is `target`, compared
    /// with the reference's `reference` row when there is one.
    mutating func add(
        _ row: UnsafeBufferPointer<Float>, target: Int, reference: UnsafeBufferPointer<Float>?
    ) {
        let lse = Self.logSumExp(row)
        negativeLogLikelihood += lse - Double(row[target])
        positions += 1
        guard let reference else { return }
        let refLSE = Self.logSumExp(reference)
        var kl = 0.0
        var diff = 0.0
        for v in 0..<row.count {
            let logP = Double(reference[v]) - refLSE
            let logQ = Double(row[v]) - lse
            kl += exp(logP) * (logP - logQ)
            diff += abs(Double(row[v]) - Double(reference[v]))
        }
        divergences.append(max(0, kl))
        absoluteDifference += diff / Double(row.count)
        if Self.argmax(row) == Self.argmax(reference) { agreements += 1 }
    }

    var perplexity: Double { positions == 0 ? .nan : exp(negativeLogLikelihood / Double(positions)) }
    var meanKL: Double? { divergences.isEmpty ? nil : divergences.reduce(0, +) / Double(divergences.count) }
    var p99KL: Double? { divergences.isEmpty ? nil : Self.percentile(divergences, 0.99) }
    var topOneAgreement: Double? {
        divergences.isEmpty ? nil : Double(agreements) / Double(divergences.count)
    }
    var meanAbsoluteLogitDifference: Double? {
        divergences.isEmpty ? nil : absoluteDifference / Double(divergences.count)
    }

    static func logSumExp(_ row: UnsafeBufferPointer<Float>) -> Double {
        let m = Double(row.max() ?? 0)
        var sum = 0.0
        for x in row { sum += exp(Double(x) - m) }
        return m + log(sum)
    }

    static func argmax(_ row: UnsafeBufferPointer<Float>) -> Int {
        var best = 0
        for i in 1..<row.count where row[i] > row[best] { best = i }
        return best
    }

    /// numpy's `percentile(values, 100·q)` (linear): between the order statistics at
    /// `q·(n−1)`.
    static func percentile(_ values: [Double], _ q: Double) -> Double {
        let sorted = values.sorted()
        let at = q * Double(sorted.count - 1)
        let lo = Int(at.rounded(.down))
        let hi = min(lo + 1, sorted.count - 1)
        return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - Double(lo))
    }
}

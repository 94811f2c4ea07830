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
        if let reference { add(row, target: target, against: reference) } else { add(row, target: target) }
    }

    /// Adds a position with no reference (the reference model itself).
    mutating func add(_ row: UnsafeBufferPointer<Float>, target: Int) {
        negativeLogLikelihood += Self.logSumExp(row) - Double(row[target])
        positions += 1
    }

    /// Adds a position compared with a reference row of float32 (a model) or float64 (the
    /// exact reference) logits.
    mutating func add<R: RandomAccessCollection>(
        _ row: UnsafeBufferPointer<Float>, target: Int, against reference: R
    ) where R.Element: BinaryFloatingPoint, R.Index == Int {
        let lse = Self.logSumExp(row)
        add(row, target: target)
        let refMax = Double(reference.max() ?? 0)
        var refSum = 0.0
        for x in reference { refSum += exp(Double(x) - refMax) }
        let refLSE = refMax + log(refSum)
        var kl = 0.0
        var diff = 0.0
        let base = reference.startIndex
        var best = 0
        var refBest = 0
        for v in 0..<row.count {
            let r = Double(reference[base + v])
            let logP = r - refLSE
            let logQ = Double(row[v]) - lse
            kl += exp(logP) * (logP - logQ)
            diff += abs(Double(row[v]) - r)
            if row[v] > row[best] { best = v }
            if reference[base + v] > reference[base + refBest] { refBest = v }
        }
        divergences.append(max(0, kl))
        absoluteDifference += diff / Double(row.count)
        if best == refBest { agreements += 1 }
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

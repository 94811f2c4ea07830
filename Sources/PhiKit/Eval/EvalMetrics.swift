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

    /// Adds a position with no reference (the reference model itself).
    mutating func add(_ row: UnsafeBufferPointer<Float>, target: Int) {
        add(row, target: target, logSumExp: Self.logSumExp(row))
    }

    private mutating func add(_ row: UnsafeBufferPointer<Float>, target: Int, logSumExp lse: Double) {
        negativeLogLikelihood += lse - Double(row[target])
        positions += 1
    }

    /// Adds a position compared with the reference's distribution at it (`load`ed once per
    /// position and shared by every candidate: the reference's exponentials are not computed
    /// again for each). KL = Σ p·(log p − log q) = Σ p·log p − Σ p·l + logsumexp(l), as
    /// Σ p = 1: one exponential per logit of the candidate, for its logsumexp.
    mutating func add(
        _ row: UnsafeBufferPointer<Float>, target: Int, against reference: ReferenceDistribution
    ) {
        let lse = Self.logSumExp(row)
        add(row, target: target, logSumExp: lse)
        var expected = 0.0
        var diff = 0.0
        var best = 0
        reference.logits.withUnsafeBufferPointer { r in
            reference.probabilities.withUnsafeBufferPointer { p in
                for v in 0..<row.count {
                    let l = Double(row[v])
                    expected += p[v] * l
                    diff += abs(l - r[v])
                    if row[v] > row[best] { best = v }
                }
            }
        }
        divergences.append(max(0, reference.negativeEntropy - expected + lse))
        absoluteDifference += diff / Double(row.count)
        if best == reference.best { agreements += 1 }
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

/// A reference row's next-token distribution in float64, computed once per position: its
/// logits, probabilities, Σ p·log p and first argmax (numpy's). The buffers are kept from one
/// position to the next.
struct ReferenceDistribution {
    private(set) var logits: [Double] = []
    private(set) var probabilities: [Double] = []
    /// Σ p·log p (the negative entropy).
    private(set) var negativeEntropy = 0.0
    private(set) var best = 0

    /// Takes the reference row of float32 (a model) or float64 (the exact reference) logits.
    mutating func load<R: RandomAccessCollection>(_ reference: R)
    where R.Element: BinaryFloatingPoint, R.Index == Int {
        let n = reference.count
        if logits.count != n {
            logits = [Double](repeating: 0, count: n)
            probabilities = [Double](repeating: 0, count: n)
        }
        let base = reference.startIndex
        var maximum = -Double.infinity
        best = 0
        for v in 0..<n {
            let x = Double(reference[base + v])
            logits[v] = x
            if x > maximum {
                maximum = x
                best = v
            }
        }
        var sum = 0.0
        for v in 0..<n { sum += exp(logits[v] - maximum) }
        let lse = maximum + log(sum)
        var entropy = 0.0
        for v in 0..<n {
            let logP = logits[v] - lse
            let p = exp(logP)
            probabilities[v] = p
            entropy += p * logP
        }
        negativeEntropy = entropy
    }
}

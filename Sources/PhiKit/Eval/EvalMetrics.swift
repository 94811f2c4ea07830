import Foundation
import PhiEngine

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

    /// As `add(_:target:)`, with the row's `logSumExp` already computed (`logSumExps`).
    mutating func add(_ row: UnsafeBufferPointer<Float>, target: Int, logSumExp lse: Double) {
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
        add(row, target: target, logSumExp: Self.logSumExp(row), against: reference)
    }

    /// As `add(_:target:against:)`, with the row's `logSumExp` already computed.
    mutating func add(
        _ row: UnsafeBufferPointer<Float>, target: Int, logSumExp lse: Double,
        against reference: ReferenceDistribution
    ) {
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

    /// `logSumExp` of every row of every model's block, `[model][row]`, on `threads` threads.
    /// It is the one float64 exponential per logit that each model's score needs (the rest of
    /// scoring is multiply-adds), and between blocks the engine's workers are idle: computed
    /// in order on one thread it held the other cores idle for ~1 ms a row of 200,064 logits.
    /// Each value is the same as `logSumExp`'s, so the scores do not depend on `threads`.
    static func logSumExps(of blocks: [LogitRows], threads: Int) -> [[Double]] {
        let rowCount = blocks.map(\.count).min() ?? 0
        let items = blocks.count * rowCount
        guard items > 0 else { return blocks.map { _ in [] } }
        // Addresses, not LogitRows, cross into the workers (the rows stay valid until the
        // sessions run again, after this returns).
        let rows = blocks.flatMap { block in
            (0..<rowCount).map { UInt(bitPattern: block[$0].baseAddress!) }
        }
        let vocab = blocks[0].vocabularySize
        var flat = [Double](repeating: 0, count: items)
        flat.withUnsafeMutableBufferPointer { out in
            let base = UInt(bitPattern: out.baseAddress!)
            let parts = max(1, min(threads, items))
            let body: @Sendable (Int) -> Void = { part in
                let p = UnsafeMutablePointer<Double>(bitPattern: base)!
                for i in (items * part / parts)..<(items * (part + 1) / parts) {
                    let row = UnsafePointer<Float>(bitPattern: rows[i])!
                    p[i] = logSumExp(UnsafeBufferPointer(start: row, count: vocab))
                }
            }
            if parts == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: parts, execute: body) }
        }
        return (0..<blocks.count).map { Array(flat[($0 * rowCount)..<(($0 + 1) * rowCount)]) }
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

    /// Takes the reference row of float32 (a model) or float64 (the exact reference) logits;
    /// `logSumExp` is the row's when it is already known (`EvalAccumulator.logSumExps`: the
    /// same value this computes), which saves one exponential per logit.
    mutating func load<R: RandomAccessCollection>(_ reference: R, logSumExp known: Double? = nil)
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
        let lse: Double
        if let known {
            lse = known
        } else {
            var sum = 0.0
            for v in 0..<n { sum += exp(logits[v] - maximum) }
            lse = maximum + log(sum)
        }
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

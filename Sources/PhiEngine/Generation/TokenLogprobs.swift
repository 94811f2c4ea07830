import Foundation

/// The log-probability of one chosen token and of the likeliest alternatives, as OpenAI
/// reports them: the log-softmax of the logits the model gave (before the mask, penalties,
/// temperature and filters).
public struct TokenLogprobs: Sendable, Equatable {
    public struct Alternative: Sendable, Equatable {
        public var token: Int
        public var logprob: Double
    }

    public var logprob: Double
    /// The `top` likeliest tokens, likeliest first (ties: smaller id first).
    public var top: [Alternative]

    /// OpenAI's floor for a probability that underflows (JSON has no -infinity).
    public static let floor = -9999.0

    public init(logprob: Double, top: [Alternative]) {
        self.logprob = logprob
        self.top = top
    }

    /// From the logits that chose `chosen`, with `top` alternatives.
    public init(logits: UnsafeBufferPointer<Float>, chosen: Int, top: Int) {
        var maximum = -Float.infinity
        for l in logits where l > maximum { maximum = l }
        var total = 0.0
        for l in logits { total += Double(exp(l - maximum)) }
        let logZ = Double(maximum) + Foundation.log(total)
        func logprob(_ id: Int) -> Double {
            let value = Double(logits[id]) - logZ
            return value.isFinite ? max(value, Self.floor) : Self.floor
        }
        self.logprob = logprob(chosen)
        self.top = Self.largest(top, of: logits).map { Alternative(token: $0, logprob: logprob($0)) }
    }

    /// The ids of the k largest logits, largest first (ties: smaller id first).
    static func largest(_ k: Int, of logits: UnsafeBufferPointer<Float>) -> [Int] {
        guard k > 0 else { return [] }
        var best: [(id: Int, logit: Float)] = []
        best.reserveCapacity(k + 1)
        for (id, l) in logits.enumerated() {
            if best.count == k, let last = best.last, l <= last.logit { continue }
            let at = best.firstIndex { l > $0.logit } ?? best.count
            best.insert((id, l), at: at)
            if best.count > k { best.removeLast() }
        }
        return best.map(\.id)
    }
}

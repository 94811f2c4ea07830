import Testing

/// A float64 reference's greedy run over a model's stored (quantized) weights, with the top
/// logits and the logit spread at every step (scripts/engine/make_mx_oracle.py,
/// make_phi_goldens.py). phikit's greedy tokens follow it when every token is the reference's
/// argmax, or within a near-tie of it; after a near-tie the contexts differ and the walk
/// stops (the reference is teacher-forced on phikit's tokens up to there).
struct OracleRun: Decodable {
    struct Step: Decodable {
        let top: [[Double]]  // (id, logit), best first
        let spread: Double
    }
    let greedy: [Int]
    let steps: [Step]

    /// A token other than the reference's argmax is accepted when its reference logit is
    /// within this fraction of the logit spread of the top one.
    static let nearTie = 1e-3

    /// Records an issue at the first token that is neither the argmax nor a near-tie;
    /// returns how many leading tokens equal the reference's.
    @discardableResult
    func expectFollowed(by tokens: [Int], _ label: String) -> Int {
        for (i, token) in tokens.enumerated() where token != greedy[i] {
            let step = steps[i]
            let best = step.top[0][1]
            let mine = step.top.first { Int($0[0]) == token }?[1]
            #expect(
                mine.map { best - $0 <= Self.nearTie * step.spread } == true,
                "\(label) token \(i): phikit \(token), reference \(greedy[i]) (\(step.top.prefix(3)))")
            return i
        }
        return tokens.count
    }
}

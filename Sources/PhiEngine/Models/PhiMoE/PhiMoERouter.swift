import Foundation

/// Chooses a token's experts and their weights from its router logits, as transformers'
/// `sparsemixer` does at inference (`training=False`; mlx-lm's phimoe.py ports the same).
///
/// What it computes, with s the router logits (one per expert) and ε = router_jitter_noise:
/// for the k-th choice (k = 1, 2, … expertsPerToken), among the experts not chosen yet,
///   i_k  = argmax s_j                        (the first on ties, like torch.max)
///   m    = s[i_k]
///   band = { j not chosen before : (m − s_j) / max(|s_j|, m) ≤ 2ε }   (i_k always in it)
///   w_k  = softmax of s over the band, at i_k = 1 / Σ_{j ∈ band} exp(s_j − m)
/// So each weight is the chosen expert's share among the experts within a relative 2ε of it,
/// not a softmax over the top k: with ε = 0.01 a clear winner gets weight 1, and the weights
/// need not sum to 1. The band test divides by the larger of |s_j| and m exactly as written
/// (a NaN quotient, 0/0, keeps j in the band, as torch's `>` does).
struct PhiMoERouter: Sendable {
    let experts: Int
    let perToken: Int
    /// 2ε
    let bandWidth: Float

    init(_ shape: PhiMoEShape) {
        experts = shape.experts
        perToken = shape.expertsPerToken
        bandWidth = 2 * shape.routerJitter
    }

    /// Writes the chosen experts, best first, into `indices` and their weights into `weights`
    /// (perToken each). `logits`: the token's router logits (experts).
    func route(
        _ logits: UnsafePointer<Float>, indices: UnsafeMutablePointer<Int>,
        weights: UnsafeMutablePointer<Float>
    ) {
        for k in 0..<perToken {
            var best = -1
            var top = -Float.infinity
            for j in 0..<experts where !chosen(j, indices, k) && (best < 0 || logits[j] > top) {
                (best, top) = (j, logits[j])
            }
            // softmax over the band, read at `best`: subtract the band's largest, which is
            // `top` itself (every j in the band has s_j ≤ top once earlier choices are out).
            var total: Float = 0
            for j in 0..<experts where !chosen(j, indices, k) {
                let s = logits[j]
                let outside = (top - s) / max(abs(s), top) > bandWidth
                if !outside { total += expf(s - top) }
            }
            indices[k] = best
            weights[k] = 1 / total
        }
    }

    private func chosen(_ j: Int, _ indices: UnsafeMutablePointer<Int>, _ count: Int) -> Bool {
        for k in 0..<count where indices[k] == j { return true }
        return false
    }
}

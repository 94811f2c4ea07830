import CKernels
import Testing

/// `pk_argmax` picks greedy tokens, so its answer must be the plain loop's — the first index
/// of the largest value, 0 when nothing is above -inf — on ties, NaN, infinities and every
/// length around its lane width.
@Suite("argmax kernel")
struct ArgmaxKernelTests {
    static func reference(_ x: [Float]) -> Int {
        var best = 0
        var top = -Float.infinity
        for (i, v) in x.enumerated() where v > top {
            top = v
            best = i
        }
        return best
    }

    @Test("the first largest value, as the plain loop finds it")
    func matchesPlainLoop() {
        var random = KernelRandom(seed: 31)
        var cases: [[Float]] = [[], [.nan], [-.infinity, -.infinity], [.nan, -.infinity, .nan]]
        for n in [1, 7, 8, 9, 15, 16, 17, 31, 100, 49_152] {
            let x = random.floats(n, -4, 4)
            cases.append(x)
            // ties: the same maximum twice, the later one first in lane order
            var tied = x
            tied[n - 1] = 9
            tied[n / 2] = 9
            cases.append(tied)
            // NaN around the maximum and +inf, -0 against 0
            var odd = x
            odd[0] = .nan
            odd[n - 1] = .nan
            cases.append(odd)
            var infinite = x
            infinite[n / 3] = .infinity
            cases.append(infinite)
            cases.append([Float](repeating: -0.0, count: n) + [0.0])
            cases.append([Float](repeating: -.infinity, count: n))
        }
        for x in cases {
            #expect(pk_argmax(x, x.count) == Self.reference(x), "\(x.count) values")
        }
    }
}

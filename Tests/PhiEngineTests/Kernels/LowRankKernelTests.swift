import CKernels
import Testing

@testable import PhiEngine

/// `pk_lowrank_task` (lowrank.c), the run-time LoRA/DoRA correction: against a float64
/// computation of y + (x·A)·Bᵀ (DoRA: times m / ‖W + B·Aᵀ‖), at every kernel level, with a
/// rank that is not a multiple of 8 and outputs that are not either; and a token's row the
/// same bits in a job of its own (a decode step) as among others (a prompt block, a batch).
@Suite("low-rank correction kernel")
struct LowRankKernelTests {
    static let (inputs, outputs, rank, tokens) = (72, 45, 5, 6)

    /// y after the kernel corrected the rows `rows` lists (nil: all), its chunks run last first.
    static func corrected(
        _ delta: AppliedDelta, x: [Float], y: [Float], rows: [Int]?, isa: Int32
    ) -> [Float] {
        var out = y
        let count = rows?.count ?? tokens
        x.withUnsafeBufferPointer { x in
            out.withUnsafeMutableBufferPointer { y in
                func run(_ list: UnsafePointer<Int>?) {
                    delta.withJob(
                        x.baseAddress!, ldx: inputs, y.baseAddress!, ldy: outputs, rows: list,
                        count: count, isa: isa
                    ) { job in
                        for chunk in (0..<pk_lowrank_chunks(&job)).reversed() {
                            pk_lowrank_task(&job, chunk, 0)
                        }
                    }
                }
                if let rows { rows.withUnsafeBufferPointer { run($0.baseAddress) } } else { run(nil) }
            }
        }
        return out
    }

    @Test("follows float64; a row alone, among others or listed gives the same bits",
        arguments: [false, true])
    func matchesFloat64(dora: Bool) {
        let (n, o, r, t) = (Self.inputs, Self.outputs, Self.rank, Self.tokens)
        var random = KernelRandom(seed: dora ? 7 : 3)
        let weight = random.floats(o * n, -0.3, 0.3)
        let delta = LowRankDelta(
            inputs: n, outputs: o, rank: r, a: random.floats(n * r), b: random.floats(o * r),
            magnitude: dora ? random.floats(o, 0.5, 1.5) : nil)
        let x = random.floats(t * n)
        let y = random.floats(t * o)
        weight.withUnsafeBufferPointer { w in
            var raw = pk_matrix()
            raw.kind = Int32(PK_W_F32)
            raw.rows = o
            raw.cols = n
            raw.w = UnsafeRawPointer(w.baseAddress!)
            let applied = AppliedDelta(delta, weight: raw)
            for isa in KernelLevels.all {
                let whole = Self.corrected(applied, x: x, y: y, rows: nil, isa: isa)
                for token in 0..<t {
                    let xt = x[(token * n)..<((token + 1) * n)].map(Double.init)
                    for row in 0..<o {
                        var z = 0.0
                        for k in 0..<r {
                            var h = 0.0
                            for i in 0..<n { h += xt[i] * Double(delta.a[i * r + k]) }
                            z += h * Double(delta.b[row * r + k])
                        }
                        var expected = Double(y[token * o + row]) + z
                        if let m = delta.magnitude {
                            var norm = 0.0
                            for i in 0..<n {
                                var v = Double(weight[row * n + i])
                                for k in 0..<r { v += Double(delta.b[row * r + k]) * Double(delta.a[i * r + k]) }
                                norm += v * v
                            }
                            expected *= Double(m[row]) / norm.squareRoot()
                        }
                        let got = Double(whole[token * o + row])
                        #expect(abs(got - expected) <= 1e-5 * max(1, abs(expected)), "isa \(isa) t\(token) o\(row)")
                    }
                }
                // rows 4 and 1 only, then row 2 alone: those rows as in the whole job, the
                // others untouched
                for listed in [[4, 1], [2]] {
                    let out = Self.corrected(applied, x: x, y: y, rows: listed, isa: isa)
                    for token in 0..<t {
                        let range = (token * o)..<((token + 1) * o)
                        #expect(Array(out[range]) == Array((listed.contains(token) ? whole : y)[range]))
                    }
                }
            }
        }
    }
}

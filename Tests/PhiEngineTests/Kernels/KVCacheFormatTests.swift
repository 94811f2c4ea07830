import CKernels
import Foundation
import Testing

/// The KV cache's row formats (pk_attention.h): what each width keeps of a value, and that
/// attention over a narrow cache is attention over its widened rows.
@Suite("KV cache row formats")
struct KVCacheFormatTests {
    static let narrowKinds = [Int32(PK_KV_F16), Int32(PK_KV_Q8)]

    /// `values` (rows of headDim, one per position in order) as a kv head's region of `kind`,
    /// and the same positions widened back by pk_kv_load.
    static func region(_ values: [Float], kind: Int32, key: Bool, headDim: Int) -> (
        head: [UInt8], widened: [Float]
    ) {
        let count = values.count / headDim
        let flag: Int32 = key ? 1 : 0
        var head = [UInt8](repeating: 0, count: pk_kv_head_bytes(kind, flag, Int32(headDim), count))
        var widened = [Float](repeating: .nan, count: values.count)
        head.withUnsafeMutableBytes { h in
            values.withUnsafeBufferPointer { x in
                for j in 0..<count {
                    pk_kv_store(kind, flag, h.baseAddress!, j, x.baseAddress! + j * headDim, Int32(headDim))
                }
            }
            widened.withUnsafeMutableBufferPointer { w in
                for j in 0..<count {
                    pk_kv_load(kind, flag, w.baseAddress! + j * headDim, h.baseAddress!, j, Int32(headDim))
                }
            }
        }
        return (head, widened)
    }

    @Test("attention over 16- and 8-bit regions equals attention over the widened rows, bit for bit")
    func narrowEqualsWidened() {
        var random = KernelRandom(seed: 5)
        for headDim in [8, 12, 96, 128] {
            let positions = 130
            let q = random.floats(headDim, -2, 2)
            var keys = random.floats(positions * headDim, -2, 2)
            for j in 0..<positions { keys[j * headDim + 1] += 12 }  // an outlier channel
            let values = random.floats(positions * headDim)
            var scores = [Float](repeating: 0, count: positions)
            let scale = 1 / Float(headDim).squareRoot()
            for kind in Self.narrowKinds {
                let (k, kWide) = Self.region(keys, kind: kind, key: true, headDim: headDim)
                let (v, vWide) = Self.region(values, kind: kind, key: false, headDim: headDim)
                for isa in KernelLevels.all {
                    var wide = [Float](repeating: .nan, count: headDim)
                    var narrow = wide
                    pk_attention_isa(
                        isa, Int32(PK_KV_F32), &wide, q, kWide, vWide, &scores, 3, 129,
                        Int32(headDim), scale)
                    pk_attention_isa(
                        isa, kind, &narrow, q, k, v, &scores, 3, 129, Int32(headDim), scale)
                    #expect(narrow == wide, "kind \(kind) isa \(isa) head_dim \(headDim)")
                }
            }
        }
    }

    @Test("8-bit values: within half a step of each value, a step = max|group| / 127")
    func int8Values() {
        var random = KernelRandom(seed: 9)
        for headDim in [8, 12, 64, 96, 128] {
            let group = Int(pk_kv_q8_group(Int32(headDim)))
            #expect(group == (headDim % 32 == 0 ? 32 : headDim))
            #expect(pk_kv_row_bytes(Int32(PK_KV_Q8), 0, Int32(headDim)) == headDim + 4 * headDim / group)
            // groups of very different magnitudes, one all zero, one with a single outlier
            var x = random.floats(headDim * 4, -3, 3)
            for d in 0..<headDim { x[headDim + d] = 0 }
            x[2 * headDim + 1] = 40
            let (_, back) = Self.region(x, kind: Int32(PK_KV_Q8), key: false, headDim: headDim)
            for start in stride(from: 0, to: x.count, by: group) {
                let slice = x[start..<start + group]
                let step = slice.map(abs).max()! / 127
                for i in slice.indices {
                    #expect(abs(back[i] - x[i]) <= step / 2 * 1.0001, "head_dim \(headDim) [\(i)]")
                }
            }
        }
    }

    /// Keys: the first 32 positions exactly; each later one within half a step of its group,
    /// where a step is the group's range of (x - centre) / spread (0 included) over 255, times
    /// the channel's spread: centre and spread as pk_attention.h defines them.
    @Test("8-bit keys: calibration rows exact, later keys within half a step per channel")
    func int8Keys() {
        var random = KernelRandom(seed: 13)
        let calibration = Int(PK_KV_CALIBRATION)
        for headDim in [8, 12, 96, 128] {
            let group = Int(pk_kv_q8_group(Int32(headDim)))
            #expect(pk_kv_row_bytes(Int32(PK_KV_Q8), 1, Int32(headDim)) == headDim + 5 * headDim / group)
            let positions = calibration + 20
            var x = random.floats(positions * headDim, -2, 2)
            for j in 0..<positions {
                x[j * headDim] += 15  // a channel far from 0, as real keys have
                x[j * headDim + 2] = 0.5  // one that never moves
            }
            for d in 0..<headDim { x[(positions - 2) * headDim + d] *= 30 }  // out of range
            for d in 0..<headDim { x[(positions - 1) * headDim + d] = 0 }
            let (_, back) = Self.region(x, kind: Int32(PK_KV_Q8), key: true, headDim: headDim)
            #expect(Array(back[0..<calibration * headDim]) == Array(x[0..<calibration * headDim]))
            var centre = [Float](repeating: 0, count: headDim)
            var spread = centre
            for d in 0..<headDim {
                let column = (0..<calibration).map { x[$0 * headDim + d] }
                centre[d] = Float(column.reduce(0.0) { $0 + Double($1) } / Double(calibration))
                let far = column.map { abs($0 - centre[d]) }.max()!
                spread[d] = far > 0 ? Float(sign: .plus, exponent: far.exponent + 1, significand: 1) : 1
            }
            for j in calibration..<positions {
                for start in stride(from: 0, to: headDim, by: group) {
                    let n = (start..<start + group).map { (x[j * headDim + $0] - centre[$0]) / spread[$0] }
                    let step = (max(n.max()!, 0) - min(n.min()!, 0)) / 255
                    for d in start..<start + group {
                        let i = j * headDim + d
                        let bound = spread[d] * step / 2 * 1.001 + abs(x[i]).ulp * 2
                        #expect(abs(back[i] - x[i]) <= bound, "head_dim \(headDim) position \(j) [\(d)]")
                    }
                }
            }
        }
    }
}

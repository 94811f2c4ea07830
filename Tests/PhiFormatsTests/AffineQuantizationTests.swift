import CKernels
import Foundation
import Testing

@testable import PhiFormats

// Golden files: scripts/make_quant_golden.py (mlx 0.32.4, CPU) → Fixtures/quant.

private struct QuantManifest: Decodable {
    struct Case: Decodable {
        let dtype: String
        let bits: Int
        let group: Int
        let file: String
        let weight_bytes: Int
        let scales_bytes: Int
        let biases_bytes: Int
        let dequant_bytes: Int
        let dequant_fnv1a64: String
    }
    let mlx_version: String
    let rows: Int
    let cols: Int
    let inputs: [String: String]
    let cases: [Case]
}

private enum Golden {
    static let dir: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/quant")

    static func manifest() throws -> QuantManifest {
        try JSONDecoder().decode(
            QuantManifest.self, from: Data(contentsOf: dir.appendingPathComponent("manifest.json")))
    }
    static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: dir.appendingPathComponent(name)))
    }
    static func dtype(_ name: String) -> DType { DType(pythonName: name)! }

    /// Raw little-endian input bytes of `dtype` widened to Float, independently of the
    /// library's own conversions (Float16 from the standard library, bf16 by shifting).
    static func widen(_ raw: [UInt8], _ dtype: DType) -> [Float] {
        switch dtype {
        case .f32:
            return stride(from: 0, to: raw.count, by: 4).map { i in
                Float(
                    bitPattern: UInt32(raw[i]) | UInt32(raw[i + 1]) << 8
                        | UInt32(raw[i + 2]) << 16 | UInt32(raw[i + 3]) << 24)
            }
        case .f16:
            return stride(from: 0, to: raw.count, by: 2).map { i in
                Float(Float16(bitPattern: UInt16(raw[i]) | UInt16(raw[i + 1]) << 8))
            }
        default:
            return stride(from: 0, to: raw.count, by: 2).map { i in
                Float(bitPattern: (UInt32(raw[i]) | UInt32(raw[i + 1]) << 8) << 16)
            }
        }
    }
    /// Floats that are exact in `dtype`, narrowed to its little-endian bytes (exactly; a
    /// value that is not exact fails the comparison, which is what we want).
    static func narrow(_ v: [Float], _ dtype: DType) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(v.count * dtype.size)
        for x in v {
            switch dtype {
            case .f32:
                let u = x.bitPattern
                out += [
                    UInt8(u & 0xff), UInt8(u >> 8 & 0xff), UInt8(u >> 16 & 0xff), UInt8(u >> 24),
                ]
            case .f16:
                let h = Float(Float16(x)) == x || x.isNaN ? Float16(x).bitPattern : 0x7e01
                out += [UInt8(h & 0xff), UInt8(h >> 8)]
            default:
                let h = x.bitPattern & 0xffff == 0 ? UInt16(x.bitPattern >> 16) : 0x7fc1
                out += [UInt8(h & 0xff), UInt8(h >> 8)]
            }
        }
        return out
    }
    static func fnv1a64(_ bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }
}

/// Deterministic generator for the fuzz tests (SplitMix64).
private struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
    mutating func normal() -> Float {
        let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
        let u2 = Double.random(in: 0..<1, using: &self)
        return Float((-2 * log(u1)).squareRoot() * cos(2 * .pi * u2))
    }
}

/// Random weights with adversarial groups mixed in, already rounded to `dtype` (as a
/// converter would see bf16/f16 sources).
private func randomMatrix(
    rows: Int, cols: Int, group: Int, dtype: DType,
    rng: inout SplitMix
) -> [Float] {
    var w = [Float](repeating: 0, count: rows * cols)
    for g in 0..<(rows * cols / group) {
        let base = g * group
        let kind = Int.random(in: 0..<12, using: &rng)
        let s = Float(pow(10, Double.random(in: -4...2, using: &rng)))
        let c = rng.normal() * s
        for j in 0..<group {
            w[base + j] =
                switch kind {
                case 0: c  // constant
                case 1: 0  // zero
                case 2: abs(rng.normal()) * s  // positive only
                case 3: -abs(rng.normal()) * s  // negative only
                case 4: c + rng.normal() * s * 1e-7  // tiny range
                case 5: Float(Int.random(in: -8...8, using: &rng)) * 0.25 * s  // on a grid
                default: rng.normal() * s
                }
        }
        if kind == 6 {  // |min| == |max|
            w[base] = -2 * s
            w[base + group - 1] = 2 * s
        }
    }
    switch dtype {
    case .f16: return w.map { Float(Float16($0)) }
    case .bf16:  // round to nearest even, independently of HalfFloat.swift
        return w.map { x in
            let u = x.bitPattern
            return Float(bitPattern: (u &+ 0x7fff &+ ((u >> 16) & 1)) & 0xffff_0000)
        }
    default: return w
    }
}

private struct Outputs: Equatable {
    var weight: [UInt32]
    var scales: [UInt8]
    var biases: [UInt8]
}

private func runQuantize(
    _ q: AffineQuantization, _ w: [Float], rows: Int, cols: Int,
    dtype: DType, threads: Int, reference: Bool
) throws -> Outputs {
    var o = Outputs(
        weight: [UInt32](repeating: 0xdead_beef, count: rows * q.packedColumns(cols)),
        scales: [UInt8](repeating: 0xa5, count: rows * q.groupsPerRow(cols) * dtype.size),
        biases: [UInt8](repeating: 0x5a, count: rows * q.groupsPerRow(cols) * dtype.size))
    var failure: QuantizationError?
    w.withUnsafeBufferPointer { wp in
        o.weight.withUnsafeMutableBufferPointer { qp in
            o.scales.withUnsafeMutableBytes { sp in
                o.biases.withUnsafeMutableBytes { bp in
                    do throws(QuantizationError) {
                        try q.quantize(
                            wp, rows: rows, cols: cols, outDType: dtype, weight: qp,
                            scales: sp, biases: bp, threads: threads,
                            kernel: reference ? .reference : .fast)
                    } catch { failure = error }
                }
            }
        }
    }
    if let failure { throw failure }
    return o
}

private func runDequantize(
    _ q: AffineQuantization, _ o: Outputs, rows: Int, cols: Int,
    dtype: DType, threads: Int, reference: Bool
) throws -> [Float] {
    var out = [Float](repeating: .nan, count: rows * cols)
    var failure: QuantizationError?
    o.weight.withUnsafeBufferPointer { qp in
        o.scales.withUnsafeBytes { sp in
            o.biases.withUnsafeBytes { bp in
                out.withUnsafeMutableBufferPointer { op in
                    do throws(QuantizationError) {
                        try q.dequantize(
                            weight: qp, scales: sp, biases: bp, rows: rows, cols: cols,
                            scaleDType: dtype, into: op, threads: threads,
                            kernel: reference ? .reference : .fast)
                    } catch { failure = error }
                }
            }
        }
    }
    if let failure { throw failure }
    return out
}

/// Every instruction-set level this CPU runs (the fast kernel at each, plus the C scalar).
private let isaLevels = Array(0...Int(pk_affine_quant_best_isa()))

@Suite("AffineQuantization")
struct AffineQuantizationTests {

    // MARK: - Golden files from mlx

    @Test("manifest covers every bits × group × dtype")
    func manifestCoverage() throws {
        let m = try Golden.manifest()
        #expect(m.cases.count == 6 * 3 * 3)
        #expect(Set(m.cases.map { "\($0.dtype)/\($0.bits)/\($0.group)" }).count == 54)
        #expect(m.rows == 22 && m.cols == 128)
    }

    @Test(
        "quantize == mlx.core.quantize, bit for bit (ref, fast, every SIMD level, threads)",
        arguments: ["float32", "float16", "bfloat16"], [2, 3, 4, 5, 6, 8])
    func goldenQuantize(dtypeName: String, bits: Int) throws {
        let m = try Golden.manifest()
        let dtype = Golden.dtype(dtypeName)
        let w = Golden.widen(try Golden.bytes(m.inputs[dtypeName]!), dtype)
        for c in m.cases where c.dtype == dtypeName && c.bits == bits {
            let q = try AffineQuantization(bits: bits, groupSize: c.group)
            let gold = try Golden.bytes(c.file)
            let want = Outputs(
                weight: stride(from: 0, to: c.weight_bytes, by: 4).map { i in
                    UInt32(gold[i]) | UInt32(gold[i + 1]) << 8 | UInt32(gold[i + 2]) << 16
                        | UInt32(gold[i + 3]) << 24
                },
                scales: Array(gold[c.weight_bytes..<(c.weight_bytes + c.scales_bytes)]),
                biases: Array(
                    gold[
                        (c.weight_bytes + c.scales_bytes)..<(c.weight_bytes + c.scales_bytes
                            + c.biases_bytes)]))
            let ref = try runQuantize(
                q, w, rows: m.rows, cols: m.cols, dtype: dtype, threads: 1, reference: true)
            #expect(ref.weight == want.weight, "ref weight \(c.file)")
            #expect(ref.scales == want.scales, "ref scales \(c.file)")
            #expect(ref.biases == want.biases, "ref biases \(c.file)")
            for threads in [1, 3] {
                let fast = try runQuantize(
                    q, w, rows: m.rows, cols: m.cols, dtype: dtype,
                    threads: threads, reference: false)
                #expect(fast == want, "fast \(c.file) threads \(threads)")
            }
            for isa in isaLevels {
                var o = want
                o.weight = o.weight.map { _ in 0 }
                w.withUnsafeBufferPointer { wp in
                    o.weight.withUnsafeMutableBufferPointer { qp in
                        o.scales.withUnsafeMutableBytes { sp in
                            o.biases.withUnsafeMutableBytes { bp in
                                pk_affine_quantize_dt_isa(
                                    Int32(isa), wp.baseAddress, m.rows, m.cols, Int32(c.group),
                                    Int32(bits), try! AffineQuantization.kernelDType(dtype),
                                    qp.baseAddress, sp.baseAddress, bp.baseAddress)
                            }
                        }
                    }
                }
                #expect(o == want, "isa \(isa) \(c.file)")
            }
        }
    }

    @Test(
        "dequantize == mlx.core.dequantize, bit for bit",
        arguments: ["float32", "float16", "bfloat16"], [2, 3, 4, 5, 6, 8])
    func goldenDequantize(dtypeName: String, bits: Int) throws {
        let m = try Golden.manifest()
        let dtype = Golden.dtype(dtypeName)
        for c in m.cases where c.dtype == dtypeName && c.bits == bits {
            let q = try AffineQuantization(bits: bits, groupSize: c.group)
            let gold = try Golden.bytes(c.file)
            let wEnd = c.weight_bytes
            let sEnd = wEnd + c.scales_bytes
            let bEnd = sEnd + c.biases_bytes
            let o = Outputs(
                weight: stride(from: 0, to: wEnd, by: 4).map { i in
                    UInt32(gold[i]) | UInt32(gold[i + 1]) << 8 | UInt32(gold[i + 2]) << 16
                        | UInt32(gold[i + 3]) << 24
                },
                scales: Array(gold[wEnd..<sEnd]), biases: Array(gold[sEnd..<bEnd]))
            for (reference, threads) in [(true, 1), (false, 1), (false, 2)] {
                let d = try runDequantize(
                    q, o, rows: m.rows, cols: m.cols, dtype: dtype,
                    threads: threads, reference: reference)
                let bytes = Golden.narrow(d, dtype)
                #expect(
                    Golden.fnv1a64(bytes) == c.dequant_fnv1a64,
                    "dequant hash \(c.file) ref=\(reference) threads=\(threads)")
                if c.dequant_bytes > 0 {
                    #expect(
                        bytes == Array(gold[bEnd..<(bEnd + c.dequant_bytes)]),
                        "dequant bytes \(c.file) ref=\(reference)")
                }
            }
        }
    }

    // MARK: - Fast kernel == reference kernel

    @Test(
        "fast == ref on random shapes, seeds, dtypes and thread counts",
        arguments: [2, 3, 4, 5, 6, 8])
    func fastMatchesReference(bits: Int) throws {
        var rng = SplitMix(state: UInt64(bits) &* 0x1234_5678_9abc)
        for trial in 0..<18 {
            let group = [32, 64, 128][trial % 3]
            let dtype: DType = [.f32, .f16, .bf16][(trial / 3) % 3]
            let rows = Int.random(in: 1...37, using: &rng)
            let cols = group * Int.random(in: 1...6, using: &rng)
            let q = try AffineQuantization(bits: bits, groupSize: group)
            let w = randomMatrix(rows: rows, cols: cols, group: group, dtype: dtype, rng: &rng)
            let ref = try runQuantize(
                q, w, rows: rows, cols: cols, dtype: dtype, threads: 1, reference: true)
            for threads in [1, 2, 5, 64] {
                let fast = try runQuantize(
                    q, w, rows: rows, cols: cols, dtype: dtype,
                    threads: threads, reference: false)
                #expect(
                    fast == ref,
                    "bits \(bits) group \(group) \(dtype) \(rows)x\(cols) threads \(threads)")
            }
            // every SIMD level through the C entry point, f32 scales
            var refS = [Float](repeating: 0, count: rows * cols / group)
            var refB = refS
            var refQ = [UInt32](repeating: 0, count: rows * q.packedColumns(cols))
            pk_affine_quantize_ref(w, rows, cols, Int32(group), Int32(bits), &refQ, &refS, &refB)
            for isa in isaLevels {
                var s = refS.map { _ in Float.nan }
                var b = s
                var wq = refQ.map { _ in UInt32(0) }
                w.withUnsafeBufferPointer { wp in
                    pk_affine_quantize_dt_isa(
                        Int32(isa), wp.baseAddress, rows, cols, Int32(group),
                        Int32(bits), Int32(PK_AQ_F32), &wq, &s, &b)
                }
                #expect(
                    wq == refQ && s.map(\.bitPattern) == refS.map(\.bitPattern)
                        && b.map(\.bitPattern) == refB.map(\.bitPattern),
                    "isa \(isa) bits \(bits) group \(group)")
            }
            // dequantize: fast == ref at every level
            let dRef = try runDequantize(
                q, ref, rows: rows, cols: cols, dtype: dtype, threads: 1, reference: true)
            let dFast = try runDequantize(
                q, ref, rows: rows, cols: cols, dtype: dtype, threads: 3, reference: false)
            #expect(
                dFast.map(\.bitPattern) == dRef.map(\.bitPattern),
                "dequant bits \(bits) group \(group) \(dtype)")
            for isa in isaLevels {
                var d = [Float](repeating: .nan, count: rows * cols)
                ref.scales.withUnsafeBytes { sp in
                    ref.biases.withUnsafeBytes { bp in
                        pk_affine_dequantize_isa(
                            Int32(isa), ref.weight, sp.baseAddress, bp.baseAddress,
                            try! AffineQuantization.kernelDType(dtype), rows, cols,
                            Int32(group), Int32(bits), &d)
                    }
                }
                #expect(d.map(\.bitPattern) == dRef.map(\.bitPattern), "dequant isa \(isa)")
            }
        }
    }

    @Test("f16/bf16 scales are the f32 scales rounded to nearest even (vs Float16 / bit RNE)")
    func scaleRounding() throws {
        var rng = SplitMix(state: 99)
        let q = try AffineQuantization(bits: 4, groupSize: 32)
        let rows = 64
        let cols = 32 * 16
        // group ranges from 1e-9 (scale = eps, an f16 subnormal) to 1e4 (near f16's max)
        var w = randomMatrix(rows: rows, cols: cols, group: 32, dtype: .f32, rng: &rng)
        for g in 0..<(rows * cols / 32) {
            let s = Float(pow(10, Double(g % 14) - 9))
            for j in 0..<32 { w[g * 32 + j] *= s }
        }
        let t32 = try q.quantize(w, rows: rows, cols: cols, outDType: .f32)
        let t16 = try q.quantize(w, rows: rows, cols: cols, outDType: .f16)
        let tbf = try q.quantize(w, rows: rows, cols: cols, outDType: .bf16, threads: 2)
        #expect(t16.weight == t32.weight && tbf.weight == t32.weight)  // q uses the fp32 scale
        for r in 0..<rows {
            for g in 0..<q.groupsPerRow(cols) {
                for (f, b16, bbf) in [
                    (t32.scale(row: r, group: g), t16.scales, tbf.scales),
                    (t32.bias(row: r, group: g), t16.biases, tbf.biases),
                ] {
                    let i = 2 * (r * q.groupsPerRow(cols) + g)
                    let h = UInt16(b16[i]) | UInt16(b16[i + 1]) << 8
                    let bf = UInt16(bbf[i]) | UInt16(bbf[i + 1]) << 8
                    #expect(h == Float16(f).bitPattern, "f16 of \(f)")
                    let u = f.bitPattern
                    #expect(bf == UInt16((u &+ 0x7fff &+ ((u >> 16) & 1)) >> 16), "bf16 of \(f)")
                }
            }
        }
    }

    // MARK: - Invariants

    /// mlx's edge rescale can shrink |scale| (q0 rounded up), so the far end of a group may
    /// be clamped at 2^bits - 1: there the error reaches up to one step, |scale|, and mlx
    /// itself does this. Every value that was not clamped is within |scale|/2.
    @Test(
        "dequantization error: ≤ |scale|/2 unless clamped, ≤ |scale| always (f32 scales)",
        arguments: [2, 3, 4, 5, 6, 8])
    func errorBound(bits: Int) throws {
        var rng = SplitMix(state: 77 &+ UInt64(bits))
        for group in AffineQuantization.supportedGroupSizes {
            let q = try AffineQuantization(bits: bits, groupSize: group)
            let rows = 24
            let cols = 512
            let w = randomMatrix(rows: rows, cols: cols, group: group, dtype: .f32, rng: &rng)
            let t = try q.quantize(w, rows: rows, cols: cols, outDType: .f32, threads: 2)
            let d = try t.dequantized()
            let nBins = Float((1 << bits) - 1)
            for r in 0..<rows {
                for c in 0..<cols {
                    let s = t.scale(row: r, group: c / group)
                    let b = t.bias(row: r, group: c / group)
                    let x = w[r * cols + c]
                    let y = d[r * cols + c]
                    // rounding slack of s*q + b in float32
                    let slack = 4 * max(abs(x), abs(b), abs(y)).ulp
                    let unclamped = ((x - b) / s).rounded(.toNearestOrEven)
                    let err = abs(x - y)
                    if unclamped >= 0 && unclamped <= nBins {
                        #expect(
                            err <= abs(s) / 2 * (1 + 1e-6) + slack,
                            "bits \(bits) group \(group) [\(r),\(c)] x=\(x) y=\(y) s=\(s)")
                    }
                    #expect(
                        err <= abs(s) * (1 + 1e-6) + slack,
                        "bits \(bits) group \(group) [\(r),\(c)]")
                }
            }
        }
    }

    @Test("groups of equal values and zero survive exactly")
    func exactValues() throws {
        let q = try AffineQuantization(bits: 4, groupSize: 32)
        var w = [Float](repeating: 0.375, count: 32) + [Float](repeating: 0, count: 32)
        w += (0..<32).map { Float($0 % 16) * 0.25 - 2 }  // 0.0 sits on the grid
        let t = try q.quantize(w, rows: 1, cols: 96, outDType: .f32)
        let d = try t.dequantized()
        #expect(d == w)
        #expect(t.bias(row: 0, group: 1) == 0)
    }

    // MARK: - Parameters and API

    @Test("bad parameters throw usage errors", arguments: [0, 1, 7, 9, 16, -4])
    func badBits(bits: Int) {
        #expect(throws: QuantizationError.unsupportedBits(bits)) {
            try AffineQuantization(bits: bits, groupSize: 64)
        }
        #expect(QuantizationError.unsupportedBits(bits).exitCode == .usage)
    }

    @Test("bad group sizes throw usage errors", arguments: [0, 16, 48, 96, 256, -64])
    func badGroup(group: Int) {
        #expect(throws: QuantizationError.unsupportedGroupSize(group)) {
            try AffineQuantization(bits: 4, groupSize: group)
        }
        #expect(QuantizationError.unsupportedGroupSize(group).exitCode == .usage)
        #expect(QuantizationError.unsupportedGroupSize(group).hint != nil)
    }

    @Test("shapes, dtypes and buffers are checked before any kernel runs")
    func badShapesAndBuffers() throws {
        let q = try AffineQuantization(bits: 4, groupSize: 64)
        #expect(q.packedColumns(3072) == 384)
        #expect(q.groupsPerRow(3072) == 48)
        #expect(q.canQuantize(shape: [8192, 3072]))
        #expect(q.canQuantize(shape: [2, 3, 128]))
        #expect(!q.canQuantize(shape: [3072]))
        #expect(!q.canQuantize(shape: [10, 96]))
        #expect(!q.canQuantize(shape: [0, 64]))
        #expect(q.quantizedShapes(for: [32064, 3072]) == ([32064, 384], [32064, 48]))
        let q3 = try AffineQuantization(bits: 3, groupSize: 32)
        #expect(q3.packedColumns(96) == 9)
        #expect(throws: QuantizationError.shapeNotDivisible(cols: 96, groupSize: 64)) {
            _ = try q.quantize([Float](repeating: 0, count: 96), rows: 1, cols: 96, outDType: .f16)
        }
        #expect(throws: QuantizationError.unsupportedDType(.i32)) {
            _ = try q.quantize([Float](repeating: 0, count: 64), rows: 1, cols: 64, outDType: .i32)
        }
        #expect(throws: QuantizationError.bufferTooSmall(buffer: "input", needed: 128, got: 64)) {
            _ = try q.quantize([Float](repeating: 0, count: 64), rows: 2, cols: 64, outDType: .f16)
        }
        let w = [Float](repeating: 1, count: 128)
        var small = [UInt32](repeating: 0, count: 7)
        var s = [UInt8](repeating: 0, count: 4)
        var b = s
        #expect(throws: QuantizationError.bufferTooSmall(buffer: "weight", needed: 16, got: 7)) {
            try w.withUnsafeBufferPointer { wp in
                try small.withUnsafeMutableBufferPointer { qp in
                    try s.withUnsafeMutableBytes { sp in
                        try b.withUnsafeMutableBytes { bp in
                            try q.quantize(
                                wp, rows: 2, cols: 64, outDType: .bf16, weight: qp,
                                scales: sp, biases: bp, threads: 2)
                        }
                    }
                }
            }
        }
        #expect(small.allSatisfy { $0 == 0 })
        // zero rows is fine and writes nothing
        let empty = try q.quantize([], rows: 0, cols: 64, outDType: .f32)
        #expect(empty.weight.isEmpty && empty.scales.isEmpty)
    }

    @Test("QuantizedTensor round trip and dtype byte layout")
    func quantizedTensor() throws {
        let q = try AffineQuantization(bits: 8, groupSize: 32)
        var rng = SplitMix(state: 5)
        let w = (0..<(4 * 64)).map { _ in rng.normal() }
        for dtype in [DType.f32, .f16, .bf16] {
            let t = try q.quantize(w, rows: 4, cols: 64, outDType: dtype, threads: 2)
            #expect(t.weightShape == [4, 16] && t.scalesShape == [4, 2])
            #expect(t.scales.count == 8 * dtype.size)
            let d = try t.dequantized(threads: 2)
            for (x, y) in zip(w, d) { #expect(abs(x - y) < 0.05) }
        }
    }

    // MARK: - Speed (run by hand in release: see scripts/bench_quant.sh)

    @Test(
        "benchmark: 3072×8192 fp32 → bf16 scales (PHIKIT_QUANT_BENCH=1, release build)",
        .enabled(if: ProcessInfo.processInfo.environment["PHIKIT_QUANT_BENCH"] == "1"))
    func benchmark() throws {
        try AffineQuantizationBenchmark.run()
    }
}

/// Timing for scripts/bench_quant.sh (enabled by PHIKIT_QUANT_BENCH=1, release build). It
/// prints and asserts nothing.
enum AffineQuantizationBenchmark {
    static func run() throws {
        let rows = 3072
        let cols = 8192
        var rng = SplitMix(state: 42)
        let w = (0..<(rows * cols)).map { _ in rng.normal() * 0.02 }
        let totalParams = 3.82e9  // Phi-3.5-mini / Phi-4-mini class
        for bits in [4, 8, 3] {
            let q = try AffineQuantization(bits: bits, groupSize: 64)
            var wq = [UInt32](repeating: 0, count: rows * q.packedColumns(cols))
            var s = [UInt8](repeating: 0, count: rows * q.groupsPerRow(cols) * 2)
            var b = s
            for threads in [1, 2] {
                var best = Double.infinity
                for _ in 0..<5 {
                    let t0 = DispatchTime.now().uptimeNanoseconds
                    try w.withUnsafeBufferPointer { wp in
                        try wq.withUnsafeMutableBufferPointer { qp in
                            try s.withUnsafeMutableBytes { sp in
                                try b.withUnsafeMutableBytes { bp in
                                    try q.quantize(
                                        wp, rows: rows, cols: cols, outDType: .bf16,
                                        weight: qp, scales: sp, biases: bp, threads: threads)
                                }
                            }
                        }
                    }
                    best = min(best, Double(DispatchTime.now().uptimeNanoseconds - t0) / 1e9)
                }
                let gbps = Double(rows * cols * 4) / best / 1e9
                let model = best * totalParams / Double(rows * cols)
                print(
                    String(
                        format:
                            "quantize bits %d g64 threads %d: %.2f ms, %.2f GB/s of fp32 input, 3.8B params ≈ %.2f s",
                        bits, threads, best * 1e3, gbps, model))
            }
        }
    }
}

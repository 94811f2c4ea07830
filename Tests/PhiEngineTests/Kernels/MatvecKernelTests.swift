import CKernels
import Testing

/// Each fast matvec / dequantize kernel against its scalar reference, at every instruction-set
/// level this CPU has, on random shapes: odd row counts, row ranges that do not start at 0,
/// every bit width and group size, scales in each dtype, and rows wider than the kernels'
/// 256-group chunk. The SIMD affine kernels round x to 16 bits per group (pk_matvec.h), so
/// their bound adds that rounding: |scale| * sum(q) * xscale/2 per group, with q at most
/// 2^bits - 1 and xscale = max|x in group| / 32767.
@Suite("matvec kernels equal their scalar references")
struct MatvecKernelTests {
    /// |fast - ref| must stay below this fraction of sum_c |w_c x_c| (float32 accumulation in
    /// a different order than the reference's double sum).
    static let tolerance: Float = 2e-6

    static let affineShapes: [(bits: Int, group: Int)] = [2, 3, 4, 5, 6, 8].flatMap { bits in
        [32, 64, 128].map { (bits, $0) }
    }

    @Test("reports the instruction-set levels under test")
    func levels() {
        // The development machine is a Zen 4; elsewhere this only documents what ran.
        print("matvec levels tested: \(KernelLevels.all)")
        #expect(KernelLevels.all.first == Int32(PK_MV_ISA_SCALAR))
    }

    @Test("affine rows, all bits and groups, scales f32/f16/bf16", arguments: affineShapes)
    func affine(bits: Int, group: Int) {
        var random = KernelRandom(seed: UInt64(bits * 1000 + group))
        for (scaleDType, rows, groups) in [
            (Int32(PK_AQ_F32), 7, 1), (Int32(PK_AQ_F16), 33, 3), (Int32(PK_AQ_BF16), 18, 5),
            (Int32(PK_AQ_BF16), 3, 261),
        ] {
            let m = TestMatrix(
                bits: bits, group: group, scaleDType: scaleDType, rows: rows,
                cols: groups * group, random: &random)
            check(m, random: &random)
        }
    }

    @Test(
        "float rows f32/f16/bf16, widths with tails",
        arguments: [Int32(PK_W_F32), Int32(PK_W_F16), Int32(PK_W_BF16)])
    func floatRows(kind: Int32) {
        var random = KernelRandom(seed: UInt64(kind) + 77)
        for (rows, cols) in [(1, 1), (5, 15), (9, 17), (17, 172), (4, 1029), (3, 2500)] {
            check(
                TestMatrix(floatKind: kind, rows: rows, cols: cols, random: &random),
                random: &random)
        }
    }

    private func check(_ m: TestMatrix, random: inout KernelRandom) {
        let x = random.floats(m.cols)
        let w = m.dequantizedReference()
        var reference = [Float](repeating: 0, count: m.rows)
        m.withMatrix { pk_matvec_ref($0, x, &reference, 0, m.rows) }
        var bounds = (0..<m.rows).map { r in
            Self.tolerance * (0..<m.cols).reduce(Float(0)) { $0 + abs(w[r * m.cols + $1] * x[$1]) }
        }
        if m.kind == Int32(PK_W_AFFINE) {
            let g = Int(m.group)
            let groups = m.cols / g
            let qmax = Float((1 << Int(m.bits)) - 1)
            let scales = m.absoluteScales()
            for r in 0..<m.rows {
                for j in 0..<groups {
                    let xmax = x[(j * g)..<((j + 1) * g)].map(abs).max()!
                    bounds[r] += scales[r * groups + j] * qmax * Float(g) * xmax / 32767 / 2
                }
            }
        }
        for isa in KernelLevels.all {
            var prep = [Float](repeating: .nan, count: pk_matvec_prep_floats(m.cols))
            var y = [Float](repeating: .nan, count: m.rows)
            let r0 = m.rows > 2 ? 1 : 0  // a range that starts inside the matrix
            m.withMatrix { matrix in
                pk_matvec_prepare(isa, matrix, x, &prep)
                pk_matvec_isa(isa, matrix, x, prep, &y, 0, r0)
                y.withUnsafeMutableBufferPointer { out in
                    pk_matvec_isa(isa, matrix, x, prep, out.baseAddress! + r0, r0, m.rows)
                }
            }
            for r in 0..<m.rows {
                #expect(
                    abs(y[r] - reference[r]) <= bounds[r] + 1e-7,
                    "isa \(isa) kind \(m.kind) bits \(m.bits) group \(m.group) row \(r) of \(m.rows)×\(m.cols)"
                )
            }
            var tile = [Float](repeating: .nan, count: m.rows * m.cols)
            m.withMatrix { pk_dequantize_rows_isa(isa, $0, 0, m.rows, &tile) }
            let worst = zip(tile, w).map { abs($0 - $1) / (abs($1) + 1) }.max() ?? 0
            #expect(
                worst <= 1e-6,
                "dequantize isa \(isa) kind \(m.kind) bits \(m.bits) group \(m.group)")
        }
    }
}

import CKernels
import Testing

/// The 8-bit-activation kernel (matvec_act8.c): at every instruction-set level bit for bit
/// what the portable lane-by-lane version computes, a token's row the same alone and in a
/// block, and within the rounding of x to int8 of the float64 reference. Rounding x to
/// d·xq with d <= max|x in block| / 127 + U (U = max|x| / (127 · 32767), the token's unit: d
/// is a whole multiple of it) leaves |x - d·xq| <= d/2 per value, and the kernel puts back
/// the part the middle q value carries, so per group the error is at most
/// |scale| · 8 · (group values) · d/2 (|q - 8| <= 8).
@Suite("8-bit-activation matvec kernel")
struct Act8MatvecTests {
    static let tolerance: Float = 2e-6

    @Test("covers 4-bit rows of groups 32 and 64 at least 128 wide, nothing else")
    func coverage() {
        var random = KernelRandom(seed: 5)
        for (bits, group, cols, covered) in [
            (4, 64, 512, true), (4, 32, 256, true), (4, 64, 576, true), (4, 32, 160, true),
            (4, 128, 512, false), (4, 32, 96, false), (8, 64, 512, false), (3, 64, 512, false),
        ] {
            let m = TestMatrix(
                bits: bits, group: group, scaleDType: Int32(PK_AQ_BF16), rows: 2, cols: cols,
                random: &random)
            #expect((m.withMatrix { pk_matvec_act8_covers($0) } != 0) == covered, "\(bits) \(group) \(cols)")
        }
        let f = TestMatrix(floatKind: Int32(PK_W_F32), rows: 2, cols: 256, random: &random)
        #expect(f.withMatrix { pk_matvec_act8_covers($0) } == 0)
    }

    @Test("every level equals the portable oracle bit for bit, alone or in a block", arguments: [32, 64])
    func levels(group: Int) {
        var random = KernelRandom(seed: UInt64(group) + 80)
        for (scaleDType, rows, cols) in [
            (Int32(PK_AQ_BF16), 7, 256), (Int32(PK_AQ_F16), 12, 512),
            (Int32(PK_AQ_F32), 5, 1280), (Int32(PK_AQ_BF16), 8, 3072), (Int32(PK_AQ_F16), 4, 8192),
            // rows that end inside a quad: SmolLM2's 576, and one 64 or 32 past a quad
            (Int32(PK_AQ_F16), 5, 576), (Int32(PK_AQ_BF16), 3, 256 + group),
        ] {
            let m = TestMatrix(
                bits: 4, group: group, scaleDType: scaleDType, rows: rows, cols: cols,
                random: &random)
            // inputs with outliers and an all-zero block, as real activations have
            var xs = (0..<11).map { _ in random.floats(cols) }
            xs[1][3] = 40
            xs[2].replaceSubrange(0..<64, with: repeatElement(0, count: 64))
            // blocks too small to scale (127/max would overflow): rounded to 0 at every level
            xs[3] = xs[3].enumerated().map { $0.offset % 40 < 20 ? $0.element * 1e-38 : $0.element * 4e-37 }
            let oracle = run(m, xs, isa: Int32(PK_MV_ISA_SCALAR), tokens: xs.count)
            for isa in KernelLevels.all {
                let block = run(m, xs, isa: isa, tokens: xs.count)
                let alone = run(m, [xs[0]], isa: isa, tokens: 1)
                #expect(block == oracle, "isa \(isa) group \(group) \(rows)×\(cols): block vs oracle")
                #expect(Array(block[0..<rows]) == alone, "isa \(isa) group \(group): alone vs block")
            }
            for (t, x) in xs.enumerated() {
                var reference = [Float](repeating: 0, count: rows)
                m.withMatrix { pk_matvec_ref($0, x, &reference, 0, rows) }
                let bounds = bound(m, x: x)
                for r in 0..<rows {
                    #expect(
                        abs(oracle[t * rows + r] - reference[r]) <= bounds[r],
                        "group \(group) input \(t) row \(r) of \(rows)×\(cols): \(oracle[t * rows + r]) vs \(reference[r])")
                }
            }
        }
    }

    @Test("a prompt block split into token blocks and row chunks (jobs.c) gives every token's rows alone", arguments: [32, 64])
    func tokenBlocks(group: Int) {
        var random = KernelRandom(seed: UInt64(group) + 90)
        // 8,192 columns: a token block is a few dozen tokens, so 44 tokens make two of them;
        // 40 rows make several chunks
        let (rows, cols, tokens) = (40, 8192, 44)
        let m = TestMatrix(
            bits: 4, group: group, scaleDType: Int32(PK_AQ_BF16), rows: rows, cols: cols,
            random: &random)
        let xs = (0..<tokens).map { _ in random.floats(cols) }
        let isa = pk_matvec_best_isa()
        let stride = pk_matvec_prep_floats(cols)
        var prep = [Float](repeating: .nan, count: tokens * stride)
        var y = [Float](repeating: .nan, count: tokens * rows)
        let x = xs.flatMap { $0 }
        var chunks = 0
        m.withMatrix { matrix in
            x.withUnsafeBufferPointer { xp in
                prep.withUnsafeMutableBufferPointer { p in
                    y.withUnsafeMutableBufferPointer { out in
                        var job = pk_matvec_job(
                            m: matrix, tokens: tokens, x: xp.baseAddress!, ldx: cols,
                            prep: p.baseAddress!, prep_stride: stride, y: out.baseAddress!, ldy: rows,
                            isa: isa, chunk_rows: 0, act_bits: 8)
                        for t in 0..<pk_prepare_chunks(&job) { pk_prepare_task(&job, t, 0) }
                        chunks = pk_matvec_chunks(&job)
                        // any order a pool may take them in
                        for c in (0..<chunks).reversed() { pk_matvec_task(&job, c, 0) }
                    }
                }
            }
        }
        let rowChunks = (rows + 15) / 16
        #expect(chunks > rowChunks, "the block was split into token blocks")
        for (t, xt) in xs.enumerated() {
            let alone = run(m, [xt], isa: isa, tokens: 1)
            #expect(Array(y[(t * rows)..<((t + 1) * rows)]) == alone, "group \(group) token \(t)")
        }
    }

    /// y (tokens × rows) from preparing each input and one multiply per two row ranges.
    private func run(_ m: TestMatrix, _ xs: [[Float]], isa: Int32, tokens: Int) -> [Float] {
        let stride = pk_matvec_prep_floats(m.cols)
        var prep = [Float](repeating: .nan, count: tokens * stride)
        var y = [Float](repeating: .nan, count: tokens * m.rows)
        let r0 = m.rows > 2 ? 1 : 0
        m.withMatrix { matrix in
            prep.withUnsafeMutableBufferPointer { p in
                for t in 0..<tokens {
                    pk_matvec_prepare_act8(isa, matrix, xs[t], p.baseAddress! + t * stride)
                }
            }
            y.withUnsafeMutableBufferPointer { out in
                for (lo, hi) in [(0, r0), (r0, m.rows)] {
                    pk_matvec_tokens_act8_isa(
                        isa, matrix, tokens, prep, stride, out.baseAddress! + lo, m.rows, lo, hi)
                }
            }
        }
        return y
    }

    private func bound(_ m: TestMatrix, x: [Float]) -> [Float] {
        let w = m.dequantizedReference()
        let g = Int(m.group)
        let groups = m.cols / g
        let scales = m.absoluteScales()
        let unit = x.map(abs).max()! / (127 * 32767)
        return (0..<m.rows).map { r in
            var b = Self.tolerance * (0..<m.cols).reduce(Float(0)) { $0 + abs(w[r * m.cols + $1] * x[$1]) }
            for j in 0..<groups {
                let xmax = x[(j * g)..<((j + 1) * g)].map(abs).max()!
                b += scales[r * groups + j] * 8 * Float(g) * (xmax / 127 + unit) / 2 * 1.001
            }
            return b + 1e-6
        }
    }
}

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

    /// 4-bit rows of whole 256-value quads with groups of 32, 64 or 128 take the AVX-512 tile
    /// kernel for several tokens (3 rows × 4 tokens at a time): row counts that leave 1 or 2
    /// rows over, a 16-group chunk with a partial one after it, all scale dtypes.
    @Test("4-bit rows in 256-value quads (the tile kernel)", arguments: [32, 64, 128])
    func quadRows(group: Int) {
        var random = KernelRandom(seed: UInt64(group) + 4)
        for (scaleDType, rows, cols) in [
            (Int32(PK_AQ_BF16), 7, 256), (Int32(PK_AQ_F16), 12, 512),
            (Int32(PK_AQ_F32), 5, 1280), (Int32(PK_AQ_BF16), 8, 3072),
        ] {
            let m = TestMatrix(
                bits: 4, group: group, scaleDType: scaleDType, rows: rows, cols: cols,
                random: &random)
            check(m, random: &random)
            check(m, random: &random, tokens: 2)
        }
    }

    /// Rows that end in 64-value segments after their last quad (4-bit: SmolLM2's 576-wide
    /// q/k/v/o/gate/up, 2 quads and a segment; 1-3 segments; a lone segment) and 8-bit rows
    /// (the tile of SmolLM2's tied head: 128-value blocks and a last half block; 1,152 is past
    /// the tile's 1,024-value limit, the row kernel on the other side of it), each against
    /// the reference and, at every block size a verify block has (2-9), every token bit for
    /// bit as it is alone; row counts that leave partial row tiles, ranges that start inside.
    @Test("narrow rows: quads plus segments, 8-bit tiles; alone == block", arguments: [4, 8])
    func narrowRows(bits: Int) {
        var random = KernelRandom(seed: UInt64(bits) + 31)
        let shapes: [(group: Int, scaleDType: Int32, rows: Int, cols: Int)] =
            bits == 4
            ? [(32, Int32(PK_AQ_F16), 7, 576), (64, Int32(PK_AQ_BF16), 5, 320),
               (32, Int32(PK_AQ_F32), 4, 448), (128, Int32(PK_AQ_F16), 8, 384),
               (32, Int32(PK_AQ_F16), 3, 64), (64, Int32(PK_AQ_BF16), 2, 1088)]
            : [(32, Int32(PK_AQ_F16), 7, 576), (64, Int32(PK_AQ_BF16), 5, 576),
               (128, Int32(PK_AQ_F32), 4, 640), (32, Int32(PK_AQ_F16), 8, 64),
               (32, Int32(PK_AQ_BF16), 2, 1152)]
        for (group, scaleDType, rows, cols) in shapes {
            let m = TestMatrix(
                bits: bits, group: group, scaleDType: scaleDType, rows: rows, cols: cols,
                random: &random)
            check(m, random: &random, tokens: 9)
            checkBlocks(m, random: &random)
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

    /// Every row of `m` against `tokens` random inputs at each level: one call for a single
    /// input (the decode path) and one multi-input call (the prompt path), each split into
    /// two row ranges, checked against the reference per input; and the first input's row
    /// is bit for bit the same in both calls (a token's result never depends on its block).
    private func check(_ m: TestMatrix, random: inout KernelRandom, tokens: Int = 11) {
        let w = m.dequantizedReference()
        let xs = (0..<tokens).map { _ in random.floats(m.cols) }
        let references = xs.map { x in
            var y = [Float](repeating: 0, count: m.rows)
            m.withMatrix { pk_matvec_ref($0, x, &y, 0, m.rows) }
            return y
        }
        let bounds = xs.map { bound(m, weights: w, x: $0) }
        let stride = pk_matvec_prep_floats(m.cols)
        let r0 = m.rows > 2 ? 1 : 0  // a range that starts inside the matrix
        for isa in KernelLevels.all {
            var alone: [Float] = []
            for count in [1, tokens] {
                var prep = [Float](repeating: .nan, count: count * stride)
                var y = [Float](repeating: .nan, count: count * m.rows)
                let x = Array(xs[0..<count].joined())
                m.withMatrix { matrix in
                    x.withUnsafeBufferPointer { xp in
                        prep.withUnsafeMutableBufferPointer { p in
                            for t in 0..<count {
                                pk_matvec_prepare(
                                    isa, matrix, xp.baseAddress! + t * m.cols,
                                    p.baseAddress! + t * stride)
                            }
                        }
                    }
                    y.withUnsafeMutableBufferPointer { out in
                        for (lo, hi) in [(0, r0), (r0, m.rows)] {
                            pk_matvec_tokens_isa(
                                isa, matrix, count, x, m.cols, prep, stride, out.baseAddress! + lo,
                                m.rows, lo, hi)
                        }
                    }
                }
                if count == 1 {
                    alone = y
                } else {
                    #expect(
                        Array(y[0..<m.rows]) == alone,
                        "isa \(isa) kind \(m.kind) bits \(m.bits) group \(m.group): alone vs in a block")
                }
                for t in 0..<count {
                    for r in 0..<m.rows {
                        #expect(
                            abs(y[t * m.rows + r] - references[t][r]) <= bounds[t][r] + 1e-7,
                            "isa \(isa) kind \(m.kind) bits \(m.bits) group \(m.group) input \(t) of \(count), row \(r) of \(m.rows)×\(m.cols)"
                        )
                    }
                }
            }
            var tile = [Float](repeating: .nan, count: m.rows * m.cols)
            m.withMatrix { pk_dequantize_rows_isa(isa, $0, 0, m.rows, &tile) }
            let worst = zip(tile, w).map { abs($0 - $1) / (abs($1) + 1) }.max() ?? 0
            #expect(
                worst <= 1e-6,
                "dequantize isa \(isa) kind \(m.kind) bits \(m.bits) group \(m.group)")
        }
    }

    /// At each level, every token of blocks of 2...9 inputs (split into two row ranges) bit
    /// for bit the same as that token alone: what makes a verify block's logits those of
    /// plain decoding.
    private func checkBlocks(_ m: TestMatrix, random: inout KernelRandom, tokens: Int = 9) {
        let x = random.floats(tokens * m.cols)
        let stride = pk_matvec_prep_floats(m.cols)
        let r0 = m.rows > 2 ? 1 : 0
        for isa in KernelLevels.all {
            var prep = [Float](repeating: .nan, count: tokens * stride)
            m.withMatrix { matrix in
                x.withUnsafeBufferPointer { xp in
                    prep.withUnsafeMutableBufferPointer { p in
                        for t in 0..<tokens {
                            pk_matvec_prepare(
                                isa, matrix, xp.baseAddress! + t * m.cols, p.baseAddress! + t * stride)
                        }
                    }
                }
            }
            /// `count` tokens from `first` in one call, y [count][rows].
            func block(_ first: Int, _ count: Int) -> [Float] {
                var y = [Float](repeating: .nan, count: count * m.rows)
                m.withMatrix { matrix in
                    x.withUnsafeBufferPointer { xp in
                        prep.withUnsafeBufferPointer { p in
                            y.withUnsafeMutableBufferPointer { out in
                                for (lo, hi) in [(0, r0), (r0, m.rows)] {
                                    pk_matvec_tokens_isa(
                                        isa, matrix, count, xp.baseAddress! + first * m.cols,
                                        m.cols, p.baseAddress! + first * stride, stride,
                                        out.baseAddress! + lo, m.rows, lo, hi)
                                }
                            }
                        }
                    }
                }
                return y
            }
            let alone = (0..<tokens).map { block($0, 1) }
            for count in 2...tokens {
                let y = block(0, count)
                for t in 0..<count {
                    #expect(
                        Array(y[(t * m.rows)..<((t + 1) * m.rows)]) == alone[t],
                        "isa \(isa) bits \(m.bits) group \(m.group) \(m.rows)×\(m.cols): token \(t) of a block of \(count) vs alone")
                }
            }
        }
    }

    /// Per row: the float32 summation bound, plus for packed rows the 16-bit rounding of x.
    private func bound(_ m: TestMatrix, weights w: [Float], x: [Float]) -> [Float] {
        var bounds = (0..<m.rows).map { r in
            Self.tolerance * (0..<m.cols).reduce(Float(0)) { $0 + abs(w[r * m.cols + $1] * x[$1]) }
        }
        guard m.kind == Int32(PK_W_AFFINE) else { return bounds }
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
        return bounds
    }
}

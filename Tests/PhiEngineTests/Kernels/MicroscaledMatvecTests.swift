import CKernels
import PhiFormats
import Testing

/// The micro-scaled matvec kernels (pk_mxfp_matvec.c): every instruction-set level against
/// the scalar oracle `pk_matvec_ref` (double accumulation of value * scale * x), for 1 to 8
/// tokens and odd row ranges, and the row dequantizer bit for bit against the reference.
@Suite struct MicroscaledMatvecTests {
    struct Rng {
        var state: UInt64
        mutating func next() -> Float {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) * 2 - 1
        }
    }

    /// Quantized with the mlx-exact quantizer, so codes are what a real file holds.
    static func matrix(
        _ mode: MicroscaledMode, rows: Int, cols: Int, seed: UInt64
    )
        -> (packed: [UInt32], scales: [UInt8])
    {
        var rng = Rng(state: seed)
        let w = (0..<(rows * cols)).map { i in rng.next() * Float(1 << (i / cols % 7)) / 8 }
        let q = MicroscaledQuantization(mode: mode)
        var packed = [UInt32](repeating: 0, count: rows * q.packedColumns(cols))
        var scales = [UInt8](repeating: 0, count: rows * q.groupsPerRow(cols))
        w.withUnsafeBufferPointer { wp in
            packed.withUnsafeMutableBufferPointer { qp in
                scales.withUnsafeMutableBufferPointer { sp in
                    try! q.quantize(
                        wp, rows: rows, cols: cols, sourceDType: .bf16, weight: qp, scales: sp,
                        threads: 1)
                }
            }
        }
        return (packed, scales)
    }

    static func kind(_ mode: MicroscaledMode) -> Int32 {
        switch mode {
        case .mxfp4: Int32(PK_W_MXFP4)
        case .nvfp4: Int32(PK_W_NVFP4)
        case .mxfp8: Int32(PK_W_MXFP8)
        }
    }

    /// Levels this CPU runs (the micro-scaled AVX-512 path needs only F+BW+VL, so it is
    /// exercised even where the affine kernels stop at AVX2).
    static var levels: [Int32] {
        var out = [Int32(PK_MV_ISA_SCALAR)]
        if pk_matvec_best_isa() >= PK_MV_ISA_AVX2 || pk_affine_quant_best_isa() >= PK_AQ_ISA_AVX2 {
            out.append(Int32(PK_MV_ISA_AVX2))
        }
        if pk_affine_quant_best_isa() >= PK_AQ_ISA_AVX512 { out.append(Int32(PK_MV_ISA_AVX512)) }
        return out
    }

    @Test(arguments: MicroscaledMode.allCases)
    func fastPathsMatchReference(_ mode: MicroscaledMode) {
        let (rows, cols) = (29, 384)
        let (packed, scales) = Self.matrix(mode, rows: rows, cols: cols, seed: 11)
        var rng = Rng(state: 5)
        let tokens = 8
        let x = (0..<(tokens * cols)).map { _ in rng.next() }
        packed.withUnsafeBytes { pw in
            scales.withUnsafeBytes { sw in
                var m = pk_matrix()
                m.kind = Self.kind(mode)
                m.bits = Int32(mode.bits)
                m.group = Int32(mode.groupSize)
                m.rows = rows
                m.cols = cols
                m.w = pw.baseAddress
                m.scales = sw.baseAddress
                var reference = [Float](repeating: 0, count: tokens * rows)
                for t in 0..<tokens {
                    x.withUnsafeBufferPointer { xp in
                        reference.withUnsafeMutableBufferPointer { rp in
                            pk_matvec_ref(
                                &m, xp.baseAddress! + t * cols, rp.baseAddress! + t * rows, 0, rows)
                        }
                    }
                }
                var refRows = [Float](repeating: 0, count: rows * cols)
                pk_dequantize_rows_ref(&m, 0, rows, &refRows)
                for isa in Self.levels {
                    for n in [1, 3, 8] {
                        var y = [Float](repeating: .nan, count: n * rows)
                        let (r0, r1) = (2, rows - 1)
                        pk_mx_matvec_tokens(isa, &m, Int32(n), x, cols, &y, rows, r0, r1)
                        for t in 0..<n {
                            for r in r0..<r1 {
                                let want = reference[t * rows + r]
                                let got = y[t * rows + r - r0]
                                #expect(
                                    abs(got - want) <= 1e-5 * max(1, abs(want)),
                                    "\(mode) isa \(isa) tokens \(n) row \(r): \(got) vs \(want)")
                            }
                        }
                    }
                    var rowsOut = [Float](repeating: .nan, count: rows * cols)
                    pk_mx_dequantize_rows(isa, &m, 0, rows, &rowsOut)
                    #expect(rowsOut == refRows, "\(mode) isa \(isa) dequantized rows")
                }
            }
        }
    }
}

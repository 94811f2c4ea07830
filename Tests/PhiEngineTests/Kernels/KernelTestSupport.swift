import CKernels
import Foundation

/// Random inputs for the kernel tests, deterministic per seed (xorshift64*).
struct KernelRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed | 1 }

    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// Uniform in [lo, hi).
    mutating func float(_ lo: Float, _ hi: Float) -> Float {
        lo + (hi - lo) * Float(next() >> 40) * 0x1p-24
    }

    mutating func floats(_ n: Int, _ lo: Float = -1, _ hi: Float = 1) -> [Float] {
        (0..<n).map { _ in float(lo, hi) }
    }

    mutating func words(_ n: Int) -> [UInt32] {
        (0..<n).map { _ in UInt32(truncatingIfNeeded: next()) }
    }
}

/// The instruction-set levels this CPU runs (the kernels clamp higher requests down, so
/// testing above the best level would only repeat it).
enum KernelLevels {
    static let all: [Int32] = {
        let best = pk_matvec_best_isa()
        return [Int32(PK_MV_ISA_SCALAR), Int32(PK_MV_ISA_AVX2), Int32(PK_MV_ISA_AVX512)]
            .filter { $0 <= best }
    }()
}

/// A matrix in one of the kernel layouts, owning its bytes.
struct TestMatrix {
    let rows: Int
    let cols: Int
    let kind: Int32
    let bits: Int32
    let group: Int32
    let scaleDType: Int32
    var weights: [UInt8]
    var scales: [UInt8]
    var biases: [UInt8]

    /// Float rows of `kind` (PK_W_F32/F16/BF16) with values in [-1, 1).
    init(floatKind kind: Int32, rows: Int, cols: Int, random: inout KernelRandom) {
        (self.rows, self.cols, self.kind, bits, group, scaleDType) = (rows, cols, kind, 0, 0, 0)
        weights = Self.encode(random.floats(rows * cols), as: kind)
        (scales, biases) = ([], [])
    }

    /// Affine rows: random bit streams, scales in ±[0.01, 0.1), biases in [-0.5, 0.5).
    init(
        bits: Int, group: Int, scaleDType: Int32, rows: Int, cols: Int,
        random: inout KernelRandom
    ) {
        (self.rows, self.cols, kind) = (rows, cols, Int32(PK_W_AFFINE))
        (self.bits, self.group, self.scaleDType) = (Int32(bits), Int32(group), scaleDType)
        weights = random.words(rows * cols * bits / 32).withUnsafeBytes { Array($0) }
        let groups = rows * cols / group
        let scaleKind =
            scaleDType == Int32(PK_AQ_F32)
            ? Int32(PK_W_F32) : scaleDType == Int32(PK_AQ_F16) ? Int32(PK_W_F16) : Int32(PK_W_BF16)
        scales = Self.encode(
            (0..<groups).map { _ in random.float(0.01, 0.1) * (random.next() & 1 == 0 ? 1 : -1) },
            as: scaleKind)
        biases = Self.encode(random.floats(groups, -0.5, 0.5), as: scaleKind)
    }

    static func encode(_ values: [Float], as kind: Int32) -> [UInt8] {
        if kind == Int32(PK_W_F32) { return values.withUnsafeBytes { Array($0) } }
        var halves = [UInt16](repeating: 0, count: values.count)
        if kind == Int32(PK_W_F16) {
            pk_f32_to_f16(&halves, values, values.count)
        } else {
            pk_f32_to_bf16(&halves, values, values.count)
        }
        return halves.withUnsafeBytes { Array($0) }
    }

    /// Calls `body` with the C view of this matrix.
    func withMatrix<R>(_ body: (UnsafePointer<pk_matrix>) throws -> R) rethrows -> R {
        try weights.withUnsafeBytes { w in
            try scales.withUnsafeBytes { s in
                try biases.withUnsafeBytes { b in
                    var m = pk_matrix(
                        kind: kind, bits: bits, group: group, scale_dtype: scaleDType, rows: rows,
                        cols: cols, w: w.baseAddress, scales: s.baseAddress, biases: b.baseAddress)
                    return try body(&m)
                }
            }
        }
    }

    /// |scale| of every group, row-major (affine only).
    func absoluteScales() -> [Float] {
        let n = rows * cols / Int(group)
        var out = [Float](repeating: 0, count: n)
        scales.withUnsafeBytes { raw in
            if scaleDType == Int32(PK_AQ_F32) {
                out.withUnsafeMutableBytes { $0.copyMemory(from: raw) }
            } else {
                let halves = raw.bindMemory(to: UInt16.self)
                if scaleDType == Int32(PK_AQ_F16) {
                    pk_f16_to_f32(&out, halves.baseAddress, n)
                } else {
                    pk_bf16_to_f32(&out, halves.baseAddress, n)
                }
            }
        }
        return out.map(abs)
    }

    /// Every weight as float32, through the scalar reference.
    func dequantizedReference() -> [Float] {
        var out = [Float](repeating: 0, count: rows * cols)
        withMatrix { pk_dequantize_rows_ref($0, 0, rows, &out) }
        return out
    }
}

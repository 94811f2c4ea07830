import CKernels

/// MLX's floating-point micro-scaled quantization modes (`"mode"` in config.json's
/// `quantization`). Each group of `groupSize` values along the last axis shares one uint8
/// scale; values are small floats. No biases.
public enum MicroscaledMode: String, Sendable, CaseIterable, Hashable {
    /// 4-bit E2M1 values, groups of 32, E8M0 (power-of-two) scales.
    case mxfp4
    /// 4-bit E2M1 values, groups of 16, E4M3 scales.
    case nvfp4
    /// 8-bit E4M3 values, groups of 32, E8M0 scales.
    case mxfp8

    /// Every MLX quantization mode as config.json and `--q-mode` name it, affine first: what
    /// messages list, so that a new mode is named wherever modes are.
    public static var modeNames: [String] { ["affine"] + allCases.map(\.rawValue) }

    /// `affine, mxfp4, nvfp4 or mxfp8`.
    public static var modeList: String {
        modeNames.dropLast().joined(separator: ", ") + " or " + modeNames.last!
    }

    /// The only group size mlx accepts for the mode.
    public var groupSize: Int { self == .nvfp4 ? 16 : 32 }
    /// The only bits mlx accepts for the mode.
    public var bits: Int { self == .mxfp8 ? 8 : 4 }

    var kernelMode: Int32 {
        switch self {
        case .mxfp4: Int32(PK_MX_MXFP4)
        case .nvfp4: Int32(PK_MX_NVFP4)
        case .mxfp8: Int32(PK_MX_MXFP8)
        }
    }
}

/// One micro-scaled mode's layout and its quantize / dequantize, bit-identical to
/// `mlx.core.quantize` / `dequantize` of mlx 0.32 (golden files in PhiFormatsTests,
/// scripts/make_mx_golden.py). Packed weight `[..., cols*bits/32]` uint32 (8 E2M1 codes or 4
/// E4M3 codes per word, element 0 in the low bits), scales `[..., cols/group]` uint8.
public struct MicroscaledQuantization: GroupedPacking, Sendable, Hashable {
    public let mode: MicroscaledMode
    public var bits: Int { mode.bits }
    public var groupSize: Int { mode.groupSize }

    public init(mode: MicroscaledMode) { self.mode = mode }

    /// The mode with the bits and group size a config or command line gives (nil: the mode's
    /// own). mlx refuses any other pair, and so does this.
    public init(mode: MicroscaledMode, bits: Int?, groupSize: Int?) throws(QuantizationError) {
        if let bits, bits != mode.bits {
            throw .modeParameters(mode: mode.rawValue, bits: bits, groupSize: groupSize)
        }
        if let groupSize, groupSize != mode.groupSize {
            throw .modeParameters(mode: mode.rawValue, bits: bits, groupSize: groupSize)
        }
        self.mode = mode
    }

    /// The float value of one scale byte (E8M0 `2^(b-127)`, or E4M3 for nvfp4).
    public func scaleValue(_ byte: UInt8) -> Float { pk_mx_scale_f32(mode.kernelMode, byte) }

    /// Quantizes `rows×cols` values (row-major float32, each exact in `sourceDType`: mlx
    /// computes every step in the weight's own dtype, so the source dtype changes the bits).
    /// Refuses NaN and ±infinity (mlx would write a group of garbage). Rows are split over up
    /// to `threads` threads; the result does not depend on it.
    public func quantize(
        _ w: UnsafeBufferPointer<Float>, rows: Int, cols: Int, sourceDType: DType,
        weight: UnsafeMutableBufferPointer<UInt32>, scales: UnsafeMutableBufferPointer<UInt8>,
        threads: Int
    ) throws(QuantizationError) {
        try checkShape(rows: rows, cols: cols)
        let dt = try AffineQuantization.kernelDType(sourceDType)
        try AffineQuantization.need("input", rows * cols, w.count)
        try AffineQuantization.need("weight", rows * packedColumns(cols), weight.count)
        try AffineQuantization.need("scales", rows * groupsPerRow(cols), scales.count)
        guard rows > 0, let wp = w.baseAddress else { return }
        if let bad = Self.firstNonFinite(wp, count: rows * cols) {
            throw .nonFinite(row: bad / cols, column: bad % cols)
        }
        let job = MicroscaledJob(
            a: UInt(bitPattern: wp), q: UInt(bitPattern: weight.baseAddress),
            s: UInt(bitPattern: scales.baseAddress), cols: cols, words: packedColumns(cols),
            groups: groupsPerRow(cols), dtype: dt, mode: mode.kernelMode)
        AffineQuantization.forEachRowBlock(rows: rows, threads: threads) { start, count in
            job.quantize(start, count)
        }
    }

    /// Dequantizes into float32 values exact in `outDType`, computed as
    /// `mlx.core.dequantize(..., dtype: outDType)` does (mlx's default is bfloat16).
    public func dequantize(
        weight: UnsafeBufferPointer<UInt32>, scales: UnsafeBufferPointer<UInt8>, rows: Int,
        cols: Int, outDType: DType, into out: UnsafeMutableBufferPointer<Float>, threads: Int = 1
    ) throws(QuantizationError) {
        try checkShape(rows: rows, cols: cols)
        let dt = try AffineQuantization.kernelDType(outDType)
        try AffineQuantization.need("weight", rows * packedColumns(cols), weight.count)
        try AffineQuantization.need("scales", rows * groupsPerRow(cols), scales.count)
        try AffineQuantization.need("output", rows * cols, out.count)
        guard rows > 0 else { return }
        let job = MicroscaledJob(
            a: UInt(bitPattern: out.baseAddress), q: UInt(bitPattern: weight.baseAddress),
            s: UInt(bitPattern: scales.baseAddress), cols: cols, words: packedColumns(cols),
            groups: groupsPerRow(cols), dtype: dt, mode: mode.kernelMode)
        AffineQuantization.forEachRowBlock(rows: rows, threads: threads) { start, count in
            job.dequantize(start, count)
        }
    }

    private static func firstNonFinite(_ p: UnsafePointer<Float>, count: Int) -> Int? {
        for i in 0..<count where !p[i].isFinite { return i }
        return nil
    }
}

// Raw addresses so row blocks can cross threads under Swift 6 checking; each block touches
// only its own rows. `a` is the float side (input of quantize, output of dequantize).
private struct MicroscaledJob: Sendable {
    let a, q, s: UInt
    let cols, words, groups: Int
    let dtype, mode: Int32

    func quantize(_ start: Int, _ count: Int) {
        pk_mx_quantize_ref(
            UnsafePointer<Float>(bitPattern: a)! + start * cols, dtype, count, cols, mode,
            UnsafeMutablePointer<UInt32>(bitPattern: q)! + start * words,
            UnsafeMutablePointer<UInt8>(bitPattern: s)! + start * groups)
    }

    func dequantize(_ start: Int, _ count: Int) {
        pk_mx_dequantize_ref(
            UnsafePointer<UInt32>(bitPattern: q)! + start * words,
            UnsafePointer<UInt8>(bitPattern: s)! + start * groups, count, cols, mode, dtype,
            UnsafeMutablePointer<Float>(bitPattern: a)! + start * cols)
    }
}

import CKernels
import Dispatch

/// Why a quantization request was refused. Bad parameters are usage errors (64). A
/// tensor whose shape can't be quantized is bad model data (65). Buffers of the wrong size
/// are a bug in the caller (70).
public enum QuantizationError: UserFacingError, Equatable {
    case unsupportedBits(Int)
    case unsupportedGroupSize(Int)
    /// The last dimension is not a positive multiple of the group size.
    case shapeNotDivisible(cols: Int, groupSize: Int)
    case negativeRows(Int)
    /// scales/biases must be float32, float16 or bfloat16.
    case unsupportedDType(DType)
    /// A caller-provided buffer is smaller than the shape needs.
    case bufferTooSmall(buffer: String, needed: Int, got: Int)
    /// `mode` is none of `MicroscaledMode.modeNames`.
    case unsupportedMode(String)
    /// mxfp4/nvfp4/mxfp8 fix their bits and group size; these are not theirs.
    case modeParameters(mode: String, bits: Int?, groupSize: Int?)
    /// NaN or ±infinity at this position of the tensor (no mode can represent it).
    case nonFinite(row: Int, column: Int)

    public var message: String {
        switch self {
        case .unsupportedBits(let b):
            "unsupported quantization bits \(b) (MLX affine supports 2, 3, 4, 5, 6, 8)"
        case .unsupportedGroupSize(let g):
            "unsupported quantization group size \(g) (MLX affine supports 32, 64, 128)"
        case .shapeNotDivisible(let cols, let g):
            "cannot quantize a last dimension of \(cols) in groups of \(g)"
        case .negativeRows(let r):
            "cannot quantize \(r) rows"
        case .unsupportedDType(let d):
            "quantization scales must be float32, float16 or bfloat16, not \(d.pythonName)"
        case .bufferTooSmall(let name, let needed, let got):
            "quantization \(name) buffer holds \(got) elements, needs \(needed)"
        case .unsupportedMode(let m):
            "unsupported quantization mode '\(m)' (MLX has \(MicroscaledMode.modeList))"
        case .modeParameters(let m, let bits, let group):
            "\(m) quantization cannot use"
                + [bits.map { " \($0) bits" }, group.map { " group size \($0)" }]
                .compactMap { $0 }.joined(separator: " and")
        case .nonFinite(let row, let column):
            "cannot quantize a non-finite value (row \(row), column \(column))"
        }
    }

    public var hint: String? {
        switch self {
        case .unsupportedBits: "use --bits 2, 3, 4, 5, 6 or 8"
        case .unsupportedGroupSize: "use --group-size 32, 64 or 128"
        case .shapeNotDivisible: "use a group size that divides the tensor's last dimension"
        case .unsupportedDType: "use --dtype float16, bfloat16 or float32"
        case .unsupportedMode: "use --q-mode \(MicroscaledMode.modeList)"
        case .modeParameters(let m, _, _):
            MicroscaledMode(rawValue: m).map {
                "\(m) always uses \($0.bits) bits in groups of \($0.groupSize); drop --q-bits "
                    + "and --q-group-size"
            }
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .unsupportedBits, .unsupportedGroupSize, .unsupportedDType, .unsupportedMode,
            .modeParameters:
            .usage
        case .shapeNotDivisible, .nonFinite: .dataError
        case .negativeRows, .bufferTooSmall: .software
        }
    }
}

/// MLX affine quantization parameters (`"quantization": {"group_size", "bits", "mode":
/// "affine"}`). Each group of `groupSize` consecutive values along the last axis shares a
/// scale and a bias: `w ≈ scale * q + bias`, with `q` in `0 ..< 2^bits`. Output is
/// bit-identical to `mlx.core.quantize` and `mlx.core.dequantize`. The golden tests in
/// PhiFormatsTests prove it.
public struct AffineQuantization: GroupedPacking, Sendable, Equatable, Hashable {
    public static let supportedBits = [2, 3, 4, 5, 6, 8]
    public static let supportedGroupSizes = [32, 64, 128]

    public let bits: Int
    public let groupSize: Int
    /// What `config.json` calls it.
    public var mode: String { "affine" }

    public init(bits: Int = 4, groupSize: Int = 64) throws(QuantizationError) {
        guard Self.supportedBits.contains(bits) else { throw .unsupportedBits(bits) }
        guard Self.supportedGroupSizes.contains(groupSize) else {
            throw .unsupportedGroupSize(groupSize)
        }
        self.bits = bits
        self.groupSize = groupSize
    }

}

/// A quantized tensor in MLX's layout, held in arrays (for small tensors and tests; the
/// converter uses the buffer-based `quantize`). scales/biases are raw little-endian bytes
/// in `dtype`, exactly as they go into a safetensors file.
public struct QuantizedTensor: Sendable, Equatable {
    public var quantization: AffineQuantization
    public var rows: Int
    public var cols: Int
    public var dtype: DType
    /// `[rows, cols*bits/32]`
    public var weight: [UInt32]
    /// `[rows, cols/groupSize]` values of `dtype`, little-endian bytes.
    public var scales: [UInt8]
    public var biases: [UInt8]

    public var weightShape: [Int] { [rows, quantization.packedColumns(cols)] }
    public var scalesShape: [Int] { [rows, quantization.groupsPerRow(cols)] }

    /// Scale of group `g` of row `r`, widened to Float.
    public func scale(row r: Int, group g: Int) -> Float {
        Self.load(scales, index: r * quantization.groupsPerRow(cols) + g, dtype: dtype)
    }
    public func bias(row r: Int, group g: Int) -> Float {
        Self.load(biases, index: r * quantization.groupsPerRow(cols) + g, dtype: dtype)
    }

    static func load(_ bytes: [UInt8], index i: Int, dtype: DType) -> Float {
        switch dtype {
        case .f32:
            let u =
                UInt32(bytes[4 * i]) | UInt32(bytes[4 * i + 1]) << 8
                | UInt32(bytes[4 * i + 2]) << 16 | UInt32(bytes[4 * i + 3]) << 24
            return Float(bitPattern: u)
        case .bf16:
            return Float(bitPattern: (UInt32(bytes[2 * i]) | UInt32(bytes[2 * i + 1]) << 8) << 16)
        default:  // .f16, the only other dtype a QuantizedTensor holds
            return f16ToFloat(UInt16(bytes[2 * i]) | UInt16(bytes[2 * i + 1]) << 8)
        }
    }
}

extension AffineQuantization {
    /// Which kernel runs: the fast one (SIMD chosen at run time) or the scalar reference.
    /// Which C kernel runs: the fast one, or the scalar reference (a literal port of mlx's
    /// loop; slow, and there to check the fast one). Both split rows over threads alike.
    public enum Kernel: Sendable { case fast, reference }

    static func kernelDType(_ d: DType) throws(QuantizationError) -> Int32 {
        switch d {
        case .f32: Int32(PK_AQ_F32)
        case .f16: Int32(PK_AQ_F16)
        case .bf16: Int32(PK_AQ_BF16)
        default: throw .unsupportedDType(d)
        }
    }

    static func need(_ name: String, _ needed: Int, _ got: Int) throws(QuantizationError) {
        guard got >= needed else { throw .bufferTooSmall(buffer: name, needed: needed, got: got) }
    }

    /// Quantizes `rows×cols` float32 values (row-major) into caller-provided buffers, using up
    /// to `threads` threads (`DispatchQueue.concurrentPerform` over contiguous row blocks;
    /// rows are independent, so the result does not depend on `threads`).
    /// - weight: at least `rows * packedColumns(cols)` words.
    /// - scales, biases: at least `rows * groupsPerRow(cols) * outDType.size` bytes, written
    ///   as `outDType` (.f32/.f16/.bf16) little-endian values, rounded to nearest even like
    ///   mlx. These are exactly the bytes of the safetensors tensors. mlx writes scales in the
    ///   dtype of the input, so pass the source dtype (or the `--dtype` the model is cast to
    ///   first).
    /// bf16/f16 sources are widened to float32 first, which is exact and is what mlx does.
    /// Throws for bad shapes, dtypes or buffer sizes. Never allocates.
    public func quantize(
        _ w: UnsafeBufferPointer<Float>, rows: Int, cols: Int, outDType: DType,
        weight: UnsafeMutableBufferPointer<UInt32>, scales: UnsafeMutableRawBufferPointer,
        biases: UnsafeMutableRawBufferPointer, threads: Int, kernel: Kernel = .fast
    ) throws(QuantizationError) {
        let job = try rowJob(
            rows: rows, cols: cols, dtype: outDType, kernel: kernel, isInput: true,
            floats: UnsafeRawBufferPointer(w), words: UnsafeRawBufferPointer(weight),
            scales: UnsafeRawBufferPointer(scales), biases: UnsafeRawBufferPointer(biases))
        guard let job else { return }
        Self.forEachRowBlock(rows: rows, threads: threads) { job.quantize($0, $1) }
    }

    /// Dequantizes `rows×cols` values (`w = scale*q + bias`) into `out` as float32, computed
    /// the way `mlx.core.dequantize` does. The result type is the scales' dtype, so each value
    /// in `out` is exact in `scaleDType` (round-tripping it to f16/bf16 is lossless).
    public func dequantize(
        weight: UnsafeBufferPointer<UInt32>, scales: UnsafeRawBufferPointer,
        biases: UnsafeRawBufferPointer, rows: Int, cols: Int, scaleDType: DType,
        into out: UnsafeMutableBufferPointer<Float>, threads: Int = 1, kernel: Kernel = .fast
    ) throws(QuantizationError) {
        let job = try rowJob(
            rows: rows, cols: cols, dtype: scaleDType, kernel: kernel, isInput: false,
            floats: UnsafeRawBufferPointer(out), words: UnsafeRawBufferPointer(weight),
            scales: scales, biases: biases)
        guard let job else { return }
        Self.forEachRowBlock(rows: rows, threads: threads) { job.dequantize($0, $1) }
    }

    /// What quantize and dequantize check before they start, in the order of their
    /// arguments: the shape, the scales' dtype, then each buffer's size, the float side first
    /// when it is the input (quantize), last when it is the output. Then the job over the
    /// rows, nil when there are none.
    private func rowJob(
        rows: Int, cols: Int, dtype: DType, kernel: Kernel, isInput: Bool,
        floats: UnsafeRawBufferPointer, words: UnsafeRawBufferPointer,
        scales: UnsafeRawBufferPointer, biases: UnsafeRawBufferPointer
    ) throws(QuantizationError) -> AffineJob? {
        try checkShape(rows: rows, cols: cols)
        let dt = try Self.kernelDType(dtype)
        let scaleRowBytes = groupsPerRow(cols) * dtype.size
        let wordsPerRow = packedColumns(cols)
        let floatCount = floats.count / MemoryLayout<Float>.size
        if isInput { try Self.need("input", rows * cols, floatCount) }
        try Self.need("weight", rows * wordsPerRow, words.count / MemoryLayout<UInt32>.size)
        try Self.need("scales", rows * scaleRowBytes, scales.count)
        try Self.need("biases", rows * scaleRowBytes, biases.count)
        if !isInput { try Self.need("output", rows * cols, floatCount) }
        guard rows > 0 else { return nil }
        // Non-empty buffers have base addresses.
        return AffineJob(
            floats: UInt(bitPattern: floats.baseAddress),
            words: UInt(bitPattern: words.baseAddress),
            scales: UInt(bitPattern: scales.baseAddress),
            biases: UInt(bitPattern: biases.baseAddress), cols: cols, group: groupSize,
            bits: bits, dt: dt, scaleRowBytes: scaleRowBytes, wordsPerRow: wordsPerRow,
            kernel: kernel)
    }

    /// Splits `rows` into `min(threads, rows)` contiguous blocks of nearly equal size and runs
    /// them concurrently (inline when there is one block).
    static func forEachRowBlock(
        rows: Int, threads: Int,
        _ body: @Sendable (_ start: Int, _ count: Int) -> Void
    ) {
        let blocks = max(1, min(threads, rows))
        if blocks == 1 {
            body(0, rows)
            return
        }
        DispatchQueue.concurrentPerform(iterations: blocks) { b in
            let start = rows * b / blocks
            let end = rows * (b + 1) / blocks
            body(start, end - start)
        }
    }
}

// Raw addresses (as UInt) so the row blocks can cross threads under Swift 6 checking. Each
// block touches only its own rows of the output buffers. `floats` is the float32 side (input
// of quantize, output of dequantize), as in MicroscaledJob.
private struct AffineJob: Sendable {
    let floats, words, scales, biases: UInt
    let cols, group, bits: Int
    let dt: Int32
    let scaleRowBytes, wordsPerRow: Int
    let kernel: AffineQuantization.Kernel

    /// Row `start`'s place in each buffer.
    private func rows(from start: Int) -> (
        floats: UnsafeMutablePointer<Float>, words: UnsafeMutablePointer<UInt32>,
        scales: UnsafeMutableRawPointer, biases: UnsafeMutableRawPointer
    ) {
        (
            UnsafeMutablePointer<Float>(bitPattern: floats)! + start * cols,
            UnsafeMutablePointer<UInt32>(bitPattern: words)! + start * wordsPerRow,
            UnsafeMutableRawPointer(bitPattern: scales)! + start * scaleRowBytes,
            UnsafeMutableRawPointer(bitPattern: biases)! + start * scaleRowBytes
        )
    }

    func quantize(_ start: Int, _ count: Int) {
        let (w, q, s, b) = rows(from: start)
        switch kernel {
        case .fast: pk_affine_quantize_dt(w, count, cols, Int32(group), Int32(bits), dt, q, s, b)
        case .reference:
            pk_affine_quantize_dt_ref(w, count, cols, Int32(group), Int32(bits), dt, q, s, b)
        }
    }

    func dequantize(_ start: Int, _ count: Int) {
        let (out, q, s, b) = rows(from: start)
        switch kernel {
        case .fast: pk_affine_dequantize(q, s, b, dt, count, cols, Int32(group), Int32(bits), out)
        case .reference:
            pk_affine_dequantize_ref(q, s, b, dt, count, cols, Int32(group), Int32(bits), out)
        }
    }
}

extension AffineQuantization {
    /// Quantizes a row-major `rows×cols` array (fast kernel). Allocates the result.
    public func quantize(
        _ w: [Float], rows: Int, cols: Int, outDType: DType,
        threads: Int = 1
    ) throws(QuantizationError) -> QuantizedTensor {
        try checkShape(rows: rows, cols: cols)
        _ = try Self.kernelDType(outDType)
        try Self.need("input", rows * cols, w.count)
        var t = QuantizedTensor(
            quantization: self, rows: rows, cols: cols, dtype: outDType,
            weight: [UInt32](repeating: 0, count: rows * packedColumns(cols)),
            scales: [UInt8](repeating: 0, count: rows * groupsPerRow(cols) * outDType.size),
            biases: [UInt8](repeating: 0, count: rows * groupsPerRow(cols) * outDType.size))
        // Typed throws don't flow through the withUnsafe… closures, so carry the error out.
        var failure: QuantizationError?
        w.withUnsafeBufferPointer { wp in
            t.weight.withUnsafeMutableBufferPointer { qp in
                t.scales.withUnsafeMutableBytes { sp in
                    t.biases.withUnsafeMutableBytes { bp in
                        do throws(QuantizationError) {
                            try quantize(
                                wp, rows: rows, cols: cols, outDType: outDType,
                                weight: qp, scales: sp, biases: bp, threads: threads)
                        } catch { failure = error }
                    }
                }
            }
        }
        if let failure { throw failure }
        return t
    }

}

extension QuantizedTensor {
    /// Dequantizes to float32 (values exact in `dtype`), like `mlx.core.dequantize`.
    public func dequantized(threads: Int = 1) throws(QuantizationError) -> [Float] {
        var out = [Float](repeating: 0, count: max(0, rows) * cols)
        var failure: QuantizationError?
        weight.withUnsafeBufferPointer { qp in
            scales.withUnsafeBytes { sp in
                biases.withUnsafeBytes { bp in
                    out.withUnsafeMutableBufferPointer { op in
                        do throws(QuantizationError) {
                            try quantization.dequantize(
                                weight: qp, scales: sp, biases: bp, rows: rows, cols: cols,
                                scaleDType: dtype, into: op, threads: threads)
                        } catch { failure = error }
                    }
                }
            }
        }
        if let failure { throw failure }
        return out
    }
}

/// How one quantized layer is stored, in any mode MLX writes: affine (packed ints, scales
/// and biases in a float dtype) or micro-scaled floats (packed codes, uint8 scales, no
/// biases). What config.json's `{"group_size", "bits", "mode"}` describes.
public enum QuantizationScheme: Sendable, Hashable, CustomStringConvertible {
    case affine(AffineQuantization)
    case microscaled(MicroscaledQuantization)

    /// The scheme a config entry or command line names. Missing bits/group size take the
    /// mode's defaults, as mlx-lm's `defaults_for_mode` does (affine 4-bit g64, mxfp4 g32,
    /// nvfp4 g16, mxfp8 8-bit g32).
    public init(
        mode: String = "affine", bits: Int? = nil, groupSize: Int? = nil
    )
        throws(QuantizationError)
    {
        if mode == "affine" {
            self = .affine(try AffineQuantization(bits: bits ?? 4, groupSize: groupSize ?? 64))
        } else if let m = MicroscaledMode(rawValue: mode) {
            self = .microscaled(
                try MicroscaledQuantization(mode: m, bits: bits, groupSize: groupSize))
        } else {
            throw .unsupportedMode(mode)
        }
    }

    public var mode: String {
        switch self {
        case .affine: "affine"
        case .microscaled(let q): q.mode.rawValue
        }
    }
    public var bits: Int {
        switch self {
        case .affine(let q): q.bits
        case .microscaled(let q): q.bits
        }
    }
    public var groupSize: Int {
        switch self {
        case .affine(let q): q.groupSize
        case .microscaled(let q): q.groupSize
        }
    }
    /// Affine layers carry `.biases`; micro-scaled ones do not.
    public var hasBiases: Bool {
        if case .affine = self { return true }
        return false
    }

    /// `mxfp4`, `affine 4-bit g64`: for messages and listings.
    public var description: String {
        switch self {
        case .affine(let q): "affine \(q.bits)-bit g\(q.groupSize)"
        case .microscaled(let q): q.mode.rawValue
        }
    }

    /// The dtype of `.scales` when the weight is (cast to) `weightDType`: the same float type
    /// for affine, uint8 for micro-scaled modes.
    public func scalesDType(weightDType: DType) -> DType {
        hasBiases ? weightDType : .u8
    }

    public func packedColumns(_ cols: Int) -> Int { cols * bits / 32 }
    public func groupsPerRow(_ cols: Int) -> Int { cols / groupSize }

    public func canQuantize(shape: [Int]) -> Bool {
        switch self {
        case .affine(let q): q.canQuantize(shape: shape)
        case .microscaled(let q): q.canQuantize(shape: shape)
        }
    }

    /// Shapes of `.weight` (uint32) and of `.scales` (and `.biases`, for affine).
    public func quantizedShapes(for shape: [Int]) -> (weight: [Int], scales: [Int]) {
        let lead = shape.dropLast()
        let cols = shape.last ?? 0
        return (lead + [packedColumns(cols)], lead + [groupsPerRow(cols)])
    }

    /// Quantizes `rows×cols` float32 values exact in `dtype` (the weight's dtype after any
    /// cast; also the affine scales' dtype). `biases` is ignored for micro-scaled modes.
    public func quantize(
        _ w: UnsafeBufferPointer<Float>, rows: Int, cols: Int, dtype: DType,
        weight: UnsafeMutableBufferPointer<UInt32>, scales: UnsafeMutableRawBufferPointer,
        biases: UnsafeMutableRawBufferPointer?, threads: Int
    ) throws(QuantizationError) {
        switch self {
        case .affine(let q):
            try q.quantize(
                w, rows: rows, cols: cols, outDType: dtype, weight: weight, scales: scales,
                biases: biases ?? UnsafeMutableRawBufferPointer(start: nil, count: 0),
                threads: threads)
        case .microscaled(let q):
            try q.quantize(
                w, rows: rows, cols: cols, sourceDType: dtype, weight: weight,
                scales: scales.bindMemory(to: UInt8.self), threads: threads)
        }
    }

    /// Dequantizes into float32 values exact in `dtype` (affine: the scales' dtype; micro-
    /// scaled: the output dtype mlx is asked for, bfloat16 by default).
    public func dequantize(
        weight: UnsafeBufferPointer<UInt32>, scales: UnsafeRawBufferPointer,
        biases: UnsafeRawBufferPointer?, rows: Int, cols: Int, dtype: DType,
        into out: UnsafeMutableBufferPointer<Float>, threads: Int = 1
    ) throws(QuantizationError) {
        switch self {
        case .affine(let q):
            try q.dequantize(
                weight: weight, scales: scales,
                biases: biases ?? UnsafeRawBufferPointer(start: nil, count: 0), rows: rows,
                cols: cols, scaleDType: dtype, into: out, threads: threads)
        case .microscaled(let q):
            try q.dequantize(
                weight: weight, scales: scales.bindMemory(to: UInt8.self), rows: rows,
                cols: cols, outDType: dtype, into: out, threads: threads)
        }
    }
}

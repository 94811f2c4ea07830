import CKernels

/// The numbers of one tensor, gathered in one pass by the CKernels statistics kernels
/// (pk_stats.h): NaN and Inf counts and where the first one is, zeros, and min / max / sum of
/// the finite values. Packed quantized words (U32) and scale bytes (U8) get min, max and
/// zeros. `verify` reads every tensor through it.
public struct TensorStatistics: Sendable {
    private var raw = pk_stats()

    public init() { pk_stats_init(&raw) }

    /// Element types the kernels read.
    public static func supports(_ dtype: DType) -> Bool {
        [.f32, .f16, .bf16, .u32, .u8].contains(dtype)
    }

    /// Adds the next `bytes` of the tensor (a whole number of `dtype` elements, any alignment).
    public mutating func add(_ bytes: UnsafeRawBufferPointer, dtype: DType) {
        guard let base = bytes.baseAddress else { return }
        let n = bytes.count / dtype.size
        switch dtype {
        case .f32: pk_stats_f32(&raw, base, n)
        case .f16: pk_stats_f16(&raw, base, n)
        case .bf16: pk_stats_bf16(&raw, base, n)
        case .u32: pk_stats_u32(&raw, base, n)
        case .u8: addBytes(UnsafeRawBufferPointer(start: base, count: n))
        default: preconditionFailure("no statistics kernel for \(dtype)")
        }
    }

    /// uint8 (the scale bytes of mxfp4/nvfp4/mxfp8 layers, 1/16 to 1/32 of the weights):
    /// count, zeros, min and max, in Swift.
    private mutating func addBytes(_ bytes: UnsafeRawBufferPointer) {
        var lo = UInt8.max
        var hi = UInt8.min
        var zeros = 0
        for b in bytes {
            lo = Swift.min(lo, b)
            hi = Swift.max(hi, b)
            if b == 0 { zeros += 1 }
        }
        guard !bytes.isEmpty else { return }
        raw.count += UInt64(bytes.count)
        raw.zeros += UInt64(zeros)
        raw.min = Swift.min(raw.min, Double(lo))
        raw.max = Swift.max(raw.max, Double(hi))
    }

    public var count: Int { Int(raw.count) }
    public var nan: Int { Int(raw.nan) }
    public var inf: Int { Int(raw.inf) }
    public var zeros: Int { Int(raw.zeros) }
    /// Element index of the first NaN or Inf.
    public var firstNonFinite: Int? { raw.first_bad >= 0 ? Int(raw.first_bad) : nil }
    /// Over the finite elements (nil when there are none).
    public var min: Double? { raw.min <= raw.max ? raw.min : nil }
    public var max: Double? { raw.min <= raw.max ? raw.max : nil }
    public var mean: Double? {
        let finite = count - nan - inf
        return finite > 0 ? raw.sum / Double(finite) : nil
    }
}

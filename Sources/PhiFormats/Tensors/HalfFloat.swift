import CKernels

// Scalar bf16 / f16 <-> f32 conversions: the oracle for the C kernels in
// CKernels/half_convert.c (tests check them bit for bit on all 16-bit inputs).
// Pure bit manipulation, so results never depend on the FP environment:
// - widening is exact; a NaN stays NaN, keeps its payload and becomes quiet;
// - narrowing rounds to nearest, ties to even; overflow gives ±Inf; f16 subnormals are exact;
//   a NaN keeps its sign and top payload bits and becomes quiet.

/// bfloat16 bits → Float (exact).
@inlinable
public func bf16ToFloat(_ bits: UInt16) -> Float {
    var u = UInt32(bits) << 16
    if bits & 0x7FFF > 0x7F80 { u |= 0x0040_0000 }  // NaN: make it quiet
    return Float(bitPattern: u)
}

/// Float → bfloat16 bits, rounding to nearest even.
@inlinable
public func floatToBF16(_ x: Float) -> UInt16 {
    let u = x.bitPattern
    if u & 0x7FFF_FFFF > 0x7F80_0000 { return UInt16(truncatingIfNeeded: u >> 16) | 0x0040 }
    // Adding 0x7FFF plus the lowest kept bit, then truncating, rounds ties to even; a carry
    // out of the mantissa bumps the exponent, ending at Inf for the largest values.
    return UInt16(truncatingIfNeeded: (u &+ 0x7FFF &+ ((u >> 16) & 1)) >> 16)
}

/// IEEE half (float16) bits → Float (exact, subnormals included).
@inlinable
public func f16ToFloat(_ bits: UInt16) -> Float {
    let sign = UInt32(bits & 0x8000) << 16
    let exp = UInt32(bits >> 10) & 0x1F
    var mant = UInt32(bits) & 0x3FF
    if exp == 0x1F {  // Inf, or NaN made quiet
        return Float(bitPattern: sign | 0x7F80_0000 | mant << 13 | (mant != 0 ? 0x0040_0000 : 0))
    }
    if exp == 0 {
        if mant == 0 { return Float(bitPattern: sign) }
        // Subnormal mant × 2^-24: shift until the implicit bit (bit 10) appears.
        var shifts: UInt32 = 0
        while mant & 0x400 == 0 {
            mant <<= 1
            shifts += 1
        }
        return Float(bitPattern: sign | (113 - shifts) << 23 | (mant & 0x3FF) << 13)
    }
    return Float(bitPattern: sign | (exp + 112) << 23 | mant << 13)
}

/// Float → IEEE half (float16) bits, rounding to nearest even; overflow gives ±Inf.
@inlinable
public func floatToF16(_ x: Float) -> UInt16 {
    let u = x.bitPattern
    let sign = UInt16(truncatingIfNeeded: u >> 16) & 0x8000
    let a = u & 0x7FFF_FFFF
    if a > 0x7F80_0000 { return sign | 0x7E00 | UInt16(truncatingIfNeeded: a >> 13) & 0x3FF }
    if a >= 0x477F_F000 { return sign | 0x7C00 }  // ≥ 65520 rounds (ties to even) to Inf
    if a < 0x3880_0000 {  // below 2^-14: a subnormal half, or zero
        if a <= 0x3300_0000 { return sign }  // ≤ 2^-25 rounds to 0 (the tie goes to even)
        let e = a >> 23
        let m = a & 0x7F_FFFF | 0x80_0000
        let shift = 126 - e  // 14...24: m × 2^(e-150) in units of 2^-24
        var r = m >> shift
        let rem = m & ((1 << shift) - 1)
        let half: UInt32 = 1 << (shift - 1)
        if rem > half || (rem == half && r & 1 == 1) { r += 1 }
        return sign | UInt16(truncatingIfNeeded: r)  // r == 0x400 is the smallest normal
    }
    var r = (a - 0x3800_0000) >> 13  // rebias the exponent from 127 to 15
    let rem = a & 0x1FFF
    if rem > 0x1000 || (rem == 0x1000 && r & 1 == 1) { r += 1 }
    return sign | UInt16(truncatingIfNeeded: r)
}

/// Bulk conversions through the C kernels (AVX2/F16C when the CPU has them). Each converts
/// `src.count` elements; `dst` must hold at least that many (a programming error otherwise).
public enum HalfConvert {
    public static func bf16ToF32(
        _ src: UnsafeBufferPointer<UInt16>, into dst: UnsafeMutableBufferPointer<Float>
    ) {
        convert(src, into: dst) { pk_bf16_to_f32($0, $1, $2) }
    }

    public static func f32ToBF16(
        _ src: UnsafeBufferPointer<Float>, into dst: UnsafeMutableBufferPointer<UInt16>
    ) {
        convert(src, into: dst) { pk_f32_to_bf16($0, $1, $2) }
    }

    public static func f16ToF32(
        _ src: UnsafeBufferPointer<UInt16>, into dst: UnsafeMutableBufferPointer<Float>
    ) {
        convert(src, into: dst) { pk_f16_to_f32($0, $1, $2) }
    }

    public static func f32ToF16(
        _ src: UnsafeBufferPointer<Float>, into dst: UnsafeMutableBufferPointer<UInt16>
    ) {
        convert(src, into: dst) { pk_f32_to_f16($0, $1, $2) }
    }

    /// Runs a bulk conversion kernel after the checks all of them share: the destination holds
    /// the source's count, and an empty buffer converts nothing.
    @inline(__always)
    private static func convert<Source, Destination>(
        _ src: UnsafeBufferPointer<Source>, into dst: UnsafeMutableBufferPointer<Destination>,
        kernel: (UnsafeMutablePointer<Destination>, UnsafePointer<Source>, Int) -> Void
    ) {
        precondition(dst.count >= src.count, "HalfConvert: destination too small")
        guard let s = src.baseAddress, let d = dst.baseAddress else { return }
        kernel(d, s, src.count)
    }

    /// Widens raw little-endian bf16 or f16 bytes (for example a tensor straight from a
    /// `SafeTensorsFile`, whose data need not be 2-byte aligned) into `dst`.
    /// `dtype` must be `.bf16` or `.f16`; `dst` must hold `src.count / 2` floats.
    public static func widen(
        _ src: UnsafeRawBufferPointer, dtype: DType, into dst: UnsafeMutableBufferPointer<Float>
    ) {
        precondition(
            dtype == .bf16 || dtype == .f16, "HalfConvert.widen: \(dtype) is not a half type")
        let n = src.count / 2
        precondition(dst.count >= n, "HalfConvert: destination too small")
        guard n > 0, let s = src.baseAddress, let d = dst.baseAddress else { return }
        let convert = dtype == .bf16 ? pk_bf16_to_f32 : pk_f16_to_f32
        if Int(bitPattern: s) % 2 == 0 {
            convert(d, s.assumingMemoryBound(to: UInt16.self), n)
            return
        }
        // Misaligned: go through an aligned scratch buffer in chunks.
        let chunk = 4096
        withUnsafeTemporaryAllocation(of: UInt16.self, capacity: chunk) { scratch in
            var done = 0
            while done < n {
                let m = min(chunk, n - done)
                UnsafeMutableRawPointer(scratch.baseAddress!).copyMemory(
                    from: s + 2 * done, byteCount: 2 * m)
                convert(d + done, scratch.baseAddress!, m)
                done += m
            }
        }
    }
}

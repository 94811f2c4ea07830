import PhiFormats

/// A tensor's values in MLX affine form with groups of 32: one unsigned code per value and a
/// scale and bias per group, so that `scale * q + bias` (float32) is each value.
struct AffineGroups {
    static let groupSize = 32
    var bits: Int
    var q: [UInt8]
    var scales: [Float]
    var biases: [Float]
}

/// Decoders for GGML's block formats (ggml-quants.c `dequantize_row_*`, read from its block
/// layouts in ggml-common.h).
///
/// Two kinds of answer:
/// - `affine`: the block types whose values are exactly `scale * q + bias` per 32 values with
///   q unsigned: Q4_0 (scale d, bias −8d), Q4_1 (d, m), Q5_0 (d, −16d), Q5_1 (d, m), Q8_0
///   (q + 128, bias −128d), Q4_K and Q5_K (scale d·sc, bias −dmin·m, products of an fp16 and
///   a 6-bit integer, exact in float32). The codes are copied, not recomputed.
/// - `dequantize`: float32 values of every supported type, computed in ggml's order of
///   operations, for the types that have no exact MLX form (Q6_K, Q2_K, IQ4_NL) and for checks.
enum GGUFBlocks {
    /// Bits of the exact affine form, or nil when the type has none.
    static func exactBits(_ type: GGMLType) -> Int? {
        switch type {
        case .q4_0, .q4_1, .q4_K: 4
        case .q5_0, .q5_1, .q5_K: 5
        case .q8_0: 8
        default: nil
        }
    }

    /// Types `dequantize` can decode.
    static func canDecode(_ type: GGMLType) -> Bool {
        switch type {
        case .f32, .f16, .bf16, .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q4_K, .q5_K, .q6_K, .q2_K,
            .iq4_NL, .mxfp4:
            true
        default: false
        }
    }

    /// The exact affine form of `count` values of an exact type (`exactBits` not nil).
    static func affine(_ type: GGMLType, _ data: UnsafeRawBufferPointer, count: Int) -> AffineGroups
    {
        var out = AffineGroups(
            bits: exactBits(type)!, q: [UInt8](repeating: 0, count: count),
            scales: [Float](repeating: 0, count: count / 32),
            biases: [Float](repeating: 0, count: count / 32))
        out.q.withUnsafeMutableBufferPointer { q in
            out.scales.withUnsafeMutableBufferPointer { s in
                out.biases.withUnsafeMutableBufferPointer { b in
                    affine(type, data, count: count, q: q.baseAddress!, scales: s.baseAddress!,
                        biases: b.baseAddress!)
                }
            }
        }
        return out
    }

    /// The same into caller-owned memory: `count` codes, `count / 32` scales and biases (the
    /// streaming convert reuses one chunk buffer instead of allocating per tensor).
    static func affine(
        _ type: GGMLType, _ data: UnsafeRawBufferPointer, count: Int,
        q: UnsafeMutablePointer<UInt8>, scales: UnsafeMutablePointer<Float>,
        biases: UnsafeMutablePointer<Float>
    ) {
        for i in 0..<(count / type.blockSize) {
            let block = data.baseAddress! + i * type.blockBytes
            let g = i * type.blockSize / 32
            switch type {
            case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0:
                small(type, block, q + g * 32, &scales[g], &biases[g])
            default:
                kQuant(type, block, q + g * 32, scales + g, biases + g)
            }
        }
    }

    /// One 32-value block of Q4_0/Q4_1/Q5_0/Q5_1/Q8_0. Nibbles: value j in the low nibble of
    /// byte j, value j+16 in its high nibble; fifth bits: bit j of the 32-bit `qh`.
    private static func small(
        _ type: GGMLType, _ p: UnsafeRawPointer, _ q: UnsafeMutablePointer<UInt8>,
        _ scale: inout Float, _ bias: inout Float
    ) {
        let d = f16(p, 0)
        switch type {
        case .q4_0, .q4_1:
            let qs = type == .q4_0 ? 2 : 4
            for j in 0..<16 {
                let byte = p.load(fromByteOffset: qs + j, as: UInt8.self)
                q[j] = byte & 0xF
                q[j + 16] = byte >> 4
            }
            scale = d
            bias = type == .q4_0 ? -8 * d : f16(p, 2)
        case .q5_0, .q5_1:
            let h = type == .q5_0 ? 2 : 4
            let qh = p.loadUnaligned(fromByteOffset: h, as: UInt32.self).littleEndian
            for j in 0..<16 {
                let byte = p.load(fromByteOffset: h + 4 + j, as: UInt8.self)
                q[j] = byte & 0xF | UInt8((qh >> j) & 1) << 4
                q[j + 16] = byte >> 4 | UInt8((qh >> (j + 16)) & 1) << 4
            }
            scale = d
            bias = type == .q5_0 ? -16 * d : f16(p, 2)
        default:  // .q8_0
            for j in 0..<32 {
                q[j] = UInt8(bitPattern: p.load(fromByteOffset: 2 + j, as: Int8.self)) &+ 128
            }
            scale = d
            bias = -128 * d
        }
    }

    /// One 256-value block of Q4_K or Q5_K: 8 groups of 32, each with a 6-bit scale and min.
    private static func kQuant(
        _ type: GGMLType, _ p: UnsafeRawPointer, _ q: UnsafeMutablePointer<UInt8>,
        _ scales: UnsafeMutablePointer<Float>, _ biases: UnsafeMutablePointer<Float>
    ) {
        let d = f16(p, 0)
        let dmin = f16(p, 2)
        let sc = p + 4  // 12 bytes of packed 6-bit scales and mins
        let five = type == .q5_K
        let qh = p + 16  // Q5_K: 32 bytes of fifth bits
        let qs = p + (five ? 48 : 16)
        for pair in 0..<4 {  // 64 values: low nibbles of 32 bytes, then their high nibbles
            for half in 0..<2 {
                let g = 2 * pair + half
                let (s, m) = scaleMin(g, sc)
                scales[g] = d * Float(s)
                biases[g] = -(dmin * Float(m))
                for l in 0..<32 {
                    let byte = qs.load(fromByteOffset: 32 * pair + l, as: UInt8.self)
                    var v = half == 0 ? byte & 0xF : byte >> 4
                    if five {
                        let hbits = qh.load(fromByteOffset: l, as: UInt8.self)
                        v |= (hbits >> UInt8(g)) & 1 == 1 ? 16 : 0
                    }
                    q[32 * g + l] = v
                }
            }
        }
    }

    /// ggml's `get_scale_min_k4`.
    static func scaleMin(_ j: Int, _ q: UnsafeRawPointer) -> (UInt8, UInt8) {
        func b(_ i: Int) -> UInt8 { q.load(fromByteOffset: i, as: UInt8.self) }
        if j < 4 { return (b(j) & 63, b(j + 4) & 63) }
        return ((b(j + 4) & 0xF) | ((b(j - 4) >> 6) << 4), (b(j + 4) >> 4) | ((b(j) >> 6) << 4))
    }

    static func f16(_ p: UnsafeRawPointer, _ offset: Int) -> Float {
        f16ToFloat(p.loadUnaligned(fromByteOffset: offset, as: UInt16.self).littleEndian)
    }
}

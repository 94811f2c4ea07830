import PhiFormats

extension GGUFBlocks {
    /// MLX's packed codes straight from the block bytes, for the types whose codes already
    /// have the output's width: Q4_0, Q4_1 and Q4_K at 4 bits, Q8_0 at 8. A byte shuffle
    /// instead of unpacking a byte per value and packing again, which was most of a convert's
    /// CPU time (these types are most of a Q4_0 or Q4_K_M file). Same bytes, scales and biases
    /// as `affine` followed by MLX packing; false (nothing written) for any other type.
    ///
    /// `packed` gets `count * bits / 8` bytes; `scales` and `biases` `count / 32` values.
    static func packedAffine(
        _ type: GGMLType, _ data: UnsafeRawBufferPointer, count: Int,
        packed: UnsafeMutablePointer<UInt8>, scales: UnsafeMutablePointer<Float>,
        biases: UnsafeMutablePointer<Float>
    ) -> Bool {
        let base = data.baseAddress!
        switch type {
        case .q4_0, .q4_1:
            let qsOffset = type == .q4_0 ? 2 : 4
            for b in 0..<(count / 32) {
                let p = base + b * type.blockBytes
                let d = f16(p, 0)
                scales[b] = d
                biases[b] = type == .q4_0 ? -8 * d : f16(p, 2)
                // GGML: value j in the low nibble of qs[j], value j+16 in its high nibble.
                // MLX: values 2k and 2k+1 in the low and high nibble of byte k.
                let qs = (p + qsOffset).assumingMemoryBound(to: UInt8.self)
                let out = packed + 16 * b
                for k in 0..<8 {
                    let (a, c) = (qs[2 * k], qs[2 * k + 1])
                    out[k] = (a & 0xF) | (c << 4)
                    out[8 + k] = (a >> 4) | (c & 0xF0)
                }
            }
        case .q8_0:
            for b in 0..<(count / 32) {
                let p = base + b * 34
                let d = f16(p, 0)
                scales[b] = d
                biases[b] = -128 * d
                let qs = (p + 2).assumingMemoryBound(to: UInt8.self)
                // int8 q + 128 as an unsigned byte: the sign bit flipped.
                for j in 0..<32 { packed[32 * b + j] = qs[j] ^ 0x80 }
            }
        case .q4_K:
            for blk in 0..<(count / 256) {
                let p = base + blk * type.blockBytes
                let d = f16(p, 0)
                let dmin = f16(p, 2)
                let qs = (p + 16).assumingMemoryBound(to: UInt8.self)
                for pair in 0..<4 {  // 64 values: low nibbles of 32 bytes, then their high nibbles
                    for half in 0..<2 {
                        let g = 8 * blk + 2 * pair + half
                        let (s, m) = scaleMin(2 * pair + half, p + 4)
                        scales[g] = d * Float(s)
                        biases[g] = -(dmin * Float(m))
                        let src = qs + 32 * pair
                        let out = packed + 16 * g
                        for k in 0..<16 {
                            let (a, c) = (src[2 * k], src[2 * k + 1])
                            out[k] = half == 0 ? (a & 0xF) | (c << 4) : (a >> 4) | (c & 0xF0)
                        }
                    }
                }
            }
        default:
            return false
        }
        return true
    }
}

import PhiFormats

/// float32 values of GGUF tensors, in ggml's order of operations (so that they equal
/// `gguf.quants.dequantize` bit for bit; the golden tests check it).
extension GGUFBlocks {
    static let iq4nlValues: [Float] = [
        -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
    ]
    /// ggml's `kvalues_mxfp4`: E2M1 values doubled (the scale is halved to match).
    static let mxfp4Values: [Float] = [0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12]

    /// Decodes `count` values (`canDecode(type)` must hold) into `out`.
    static func dequantize(
        _ type: GGMLType, _ data: UnsafeRawBufferPointer, count: Int,
        into out: UnsafeMutableBufferPointer<Float>
    ) {
        let base = data.baseAddress!
        switch type {
        case .f32:
            UnsafeMutableRawBufferPointer(out).copyMemory(
                from: UnsafeRawBufferPointer(start: base, count: count * 4))
        case .f16:
            for i in 0..<count { out[i] = f16(base, 2 * i) }
        case .bf16:
            for i in 0..<count {
                out[i] = bf16ToFloat(base.loadUnaligned(fromByteOffset: 2 * i, as: UInt16.self))
            }
        case _ where exactBits(type) != nil:
            let a = affine(type, data, count: count)
            for i in 0..<count {
                out[i] = a.scales[i / 32] * Float(a.q[i]) + a.biases[i / 32]
            }
        case .q6_K:
            for b in 0..<(count / 256) { q6K(base + b * 210, out.baseAddress! + b * 256) }
        case .q2_K:
            for b in 0..<(count / 256) { q2K(base + b * 84, out.baseAddress! + b * 256) }
        case .iq4_NL, .mxfp4:
            let bytes = type.blockBytes
            for b in 0..<(count / 32) {
                let p = base + b * bytes
                let d: Float = type == .mxfp4 ? e8m0Half(p.load(as: UInt8.self)) : f16(p, 0)
                let table = type == .mxfp4 ? mxfp4Values : iq4nlValues
                let qs = bytes - 16
                for j in 0..<16 {
                    let byte = p.load(fromByteOffset: qs + j, as: UInt8.self)
                    out[32 * b + j] = d * table[Int(byte & 0xF)]
                    out[32 * b + j + 16] = d * table[Int(byte >> 4)]
                }
            }
        default:
            preconditionFailure("GGUFBlocks.dequantize: \(type.name) is not decodable")
        }
    }

    /// ggml's `GGML_E8M0_TO_FP32_HALF`: 2^(e−128), with e = 0 and 1 as subnormals.
    static func e8m0Half(_ e: UInt8) -> Float {
        e < 2 ? Float(bitPattern: 0x0020_0000 << UInt32(e)) : Float(bitPattern: UInt32(e - 1) << 23)
    }

    /// `dequantize_row_q6_K`: y = d · sc · (q − 32), 16 values per int8 scale.
    private static func q6K(_ p: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
        let d = f16(p, 208)
        for n in 0..<2 {
            let ql = p + 64 * n
            let qh = p + 128 + 32 * n
            let sc = p + 192 + 8 * n
            func s(_ i: Int) -> Float { Float(sc.load(fromByteOffset: i, as: Int8.self)) }
            for l in 0..<32 {
                let i = l / 16
                let lo = ql.load(fromByteOffset: l, as: UInt8.self)
                let lo2 = ql.load(fromByteOffset: l + 32, as: UInt8.self)
                let h = qh.load(fromByteOffset: l, as: UInt8.self)
                let q1 = Int(lo & 0xF | (h & 3) << 4) - 32
                let q2 = Int(lo2 & 0xF | ((h >> 2) & 3) << 4) - 32
                let q3 = Int(lo >> 4 | ((h >> 4) & 3) << 4) - 32
                let q4 = Int(lo2 >> 4 | ((h >> 6) & 3) << 4) - 32
                y[128 * n + l] = d * s(i) * Float(q1)
                y[128 * n + l + 32] = d * s(i + 2) * Float(q2)
                y[128 * n + l + 64] = d * s(i + 4) * Float(q3)
                y[128 * n + l + 96] = d * s(i + 6) * Float(q4)
            }
        }
    }

    /// `dequantize_row_q2_K`: y = d · (sc & 15) · q − dmin · (sc >> 4), 16 values per scale.
    private static func q2K(_ p: UnsafeRawPointer, _ y: UnsafeMutablePointer<Float>) {
        let d = f16(p, 80)
        let dmin = f16(p, 82)
        var out = 0
        var scale = 0
        for n in 0..<2 {
            let q = p + 16 + 32 * n
            for shift in stride(from: 0, to: 8, by: 2) {
                for half in 0..<2 {
                    let sc = p.load(fromByteOffset: scale, as: UInt8.self)
                    scale += 1
                    let dl = d * Float(sc & 0xF)
                    let ml = dmin * Float(sc >> 4)
                    for l in 0..<16 {
                        let v = (q.load(fromByteOffset: 16 * half + l, as: UInt8.self) >> shift) & 3
                        y[out] = dl * Float(v) - ml
                        out += 1
                    }
                }
            }
        }
    }
}

import PhiFormats

/// Carries out a `GGUFModulePlan`: the bytes of each output tensor, and the largest absolute
/// change of each inexact GGUF tensor (against ggml's own float32 values).
struct GGUFTranscoder {
    let file: GGUFFile

    struct Result {
        var tensors: [[UInt8]]
        /// GGUF tensor name → max |converted − ggml value|.
        var errors: [String: Double]
    }

    func run(_ plan: GGUFModulePlan) throws -> Result {
        let rows = plan.module.shape.first ?? 1
        switch plan.form {
        case .float(let dtype):
            var out: [UInt8] = []
            out.reserveCapacity(plan.module.shape.reduce(1, *) * dtype.size)
            var errors: [String: Double] = [:]
            for part in plan.module.parts {
                let values = floats(part)
                let bytes = narrowed(values, dtype)
                if plan.inexact.contains(part.tensor) {
                    errors[part.tensor.name] = maxError(values, bytes, dtype)
                }
                out += bytes
            }
            return Result(tensors: [out], errors: errors)
        case .mxfp4:
            var codes: [UInt8] = []
            var scales: [UInt8] = []
            for part in plan.module.parts {
                withRows(part) { raw in
                    for b in 0..<(part.tensor.elementCount / 32) {
                        let p = raw.baseAddress! + b * 17
                        scales.append(p.load(as: UInt8.self))
                        // ggml: value j in the low nibble of byte j, j+16 in its high
                        // nibble; mlx: value i in nibble i (low nibble first).
                        var block = [UInt8](repeating: 0, count: 32)
                        for j in 0..<16 {
                            let byte = p.load(fromByteOffset: 1 + j, as: UInt8.self)
                            block[j] = byte & 0xF
                            block[j + 16] = byte >> 4
                        }
                        codes += block
                    }
                }
            }
            return Result(tensors: [pack(codes, bits: 4), scales], errors: [:])
        case .affine(let bits, let scaleType):
            let cols = plan.module.shape[1]
            var q: [UInt8] = []
            var scales: [Float] = []
            var biases: [Float] = []
            q.reserveCapacity(rows * cols)
            var errors: [String: Double] = [:]
            for part in plan.module.parts {
                let groups: AffineGroups
                if GGUFBlocks.exactBits(part.tensor.type) != nil {
                    groups = withRows(part) {
                        GGUFBlocks.affine(part.tensor.type, $0, count: part.tensor.elementCount)
                    }
                } else {
                    let values = floats(part)
                    groups = try requantize8(values, cols: cols)
                    errors[part.tensor.name] = maxError(values, groups)
                }
                q += groups.q
                scales += groups.scales
                biases += groups.biases
            }
            return Result(
                tensors: [pack(q, bits: bits), encode(scales, scaleType), encode(biases, scaleType)],
                errors: errors)
        }
    }

    // MARK: - Pieces

    /// The part's raw bytes with its rows in Hugging Face order (llama q/k: per head, row
    /// 2i+j of GGML's interleaved pairs goes to row j·(head_dim/2) + i).
    private func withRows<T>(
        _ part: GGUFModelLayout.Part, _ body: (UnsafeRawBufferPointer) throws -> T
    ) rethrows -> T {
        let data = file.data(part.tensor)
        guard let heads = part.unpermuteHeads else { return try body(data) }
        let rows = part.tensor.shape[0]
        let rowBytes = part.tensor.byteCount / rows
        let headDim = rows / heads
        var copy = [UInt8](repeating: 0, count: data.count)
        copy.withUnsafeMutableBytes { dst in
            for h in 0..<heads {
                for i in 0..<(headDim / 2) {
                    for j in 0..<2 {
                        let from = (h * headDim + 2 * i + j) * rowBytes
                        let to = (h * headDim + j * (headDim / 2) + i) * rowBytes
                        dst.baseAddress!.advanced(by: to).copyMemory(
                            from: data.baseAddress! + from, byteCount: rowBytes)
                    }
                }
            }
        }
        return try copy.withUnsafeBytes { try body($0) }
    }

    /// ggml's float32 values of a part, rows in Hugging Face order.
    func floats(_ part: GGUFModelLayout.Part) -> [Float] {
        let n = part.tensor.elementCount
        var out = [Float](repeating: 0, count: n)
        withRows(part) { raw in
            out.withUnsafeMutableBufferPointer {
                GGUFBlocks.dequantize(part.tensor.type, raw, count: n, into: $0)
            }
        }
        return out
    }

    private func narrowed(_ values: [Float], _ dtype: DType) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: values.count * dtype.size)
        values.withUnsafeBufferPointer { v in
            out.withUnsafeMutableBytes { narrow(v, to: dtype, into: $0) }
        }
        return out
    }

    private func maxError(_ values: [Float], _ bytes: [UInt8], _ dtype: DType) -> Double {
        var back = [Float](repeating: 0, count: values.count)
        bytes.withUnsafeBytes { raw in back.withUnsafeMutableBufferPointer { widen(raw, dtype, into: $0) } }
        return zip(values, back).reduce(0) { max($0, Double(abs($1.0 - $1.1))) }
    }

    private func maxError(_ values: [Float], _ g: AffineGroups) -> Double {
        var worst = 0.0
        for i in 0..<values.count {
            let v = g.scales[i / 32] * Float(g.q[i]) + g.biases[i / 32]
            worst = max(worst, Double(abs(v - values[i])))
        }
        return worst
    }

    /// Float32 values to affine 8-bit, groups of 32, float32 scales: scale = range / 255,
    /// bias = the group's minimum, codes rounded to nearest. Every value then lies within
    /// half a step of its original (mlx's own quantizer pins the larger edge instead, which
    /// can cost a whole step).
    private func requantize8(_ values: [Float], cols: Int) throws -> AffineGroups {
        let groups = values.count / 32
        var out = AffineGroups(
            bits: 8, q: [UInt8](repeating: 0, count: values.count),
            scales: [Float](repeating: 0, count: groups), biases: [Float](repeating: 0, count: groups))
        for g in 0..<groups {
            let group = values[(32 * g)..<(32 * g + 32)]
            let lo = group.min()!
            let hi = group.max()!
            let scale = (hi - lo) / 255
            out.scales[g] = scale
            out.biases[g] = lo
            guard scale > 0 else { continue }  // a constant group: every code 0, exact
            for i in 0..<32 {
                let code = ((values[32 * g + i] - lo) / scale).rounded()
                out.q[32 * g + i] = UInt8(min(255, max(0, code)))
            }
        }
        return out
    }

    /// MLX's packing: each row's codes as one little-endian bit stream, value i at bit
    /// i·bits (rows are whole words since a row is whole groups of 32).
    private func pack(_ q: [UInt8], bits: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: q.count * bits / 8)
        var acc: UInt64 = 0
        var filled = 0
        var o = 0
        for v in q {
            acc |= UInt64(v) << filled
            filled += bits
            while filled >= 8 {
                out[o] = UInt8(truncatingIfNeeded: acc)
                o += 1
                acc >>= 8
                filled -= 8
            }
        }
        return out
    }

    private func encode(_ values: [Float], _ dtype: DType) -> [UInt8] { narrowed(values, dtype) }
}

import PhiFormats

/// Carries out a `GGUFModulePlan`, streaming: each part is walked in chunks of whole rows
/// (about `chunkElements` values), decoded into buffers reused across chunks, and handed to a
/// sink in output order, so memory stays bounded by a chunk plus the module's scales and
/// biases (1/32 of its values) whatever the tensor's size. Before, each module was decoded
/// into whole-tensor Swift arrays (a byte per value for the codes, then the packed copy, then
/// the concatenation), so a 3.8 B-parameter file allocated, zeroed and freed gigabytes.
///
/// Chunking changes no byte: a row is whole groups of 32, whose packed codes are whole bytes.
struct GGUFTranscoder {
    let file: GGUFFile
    /// Values per chunk (1 M: a 4-8 MB float buffer, small beside the page cache).
    var chunkElements = 1 << 20

    /// Receives the bytes of output `index` of the plan (`plan.outputs[index]`), in order;
    /// an output may come in any number of pieces, and one with no bytes not at all.
    typealias Sink = (_ index: Int, _ bytes: UnsafeRawBufferPointer) throws -> Void

    /// Streams the plan's outputs into `sink`; returns, per inexact GGUF tensor, the largest
    /// absolute change of a value (against ggml's own float32 value).
    func stream(_ plan: GGUFModulePlan, into sink: Sink) throws -> [String: Double] {
        var errors: [String: Double] = [:]
        func note(_ part: GGUFModelLayout.Part, _ worst: Double) {
            errors[part.tensor.name] = max(errors[part.tensor.name] ?? 0, worst)
        }
        switch plan.form {
        case .float(let dtype):
            for part in plan.module.parts {
                let inexact = plan.inexact.contains(part.tensor)
                var worst = 0.0
                var bytes = [UInt8](repeating: 0, count: chunkCapacity(part) * dtype.size)
                try chunks(part) { raw, count, values in
                    try bytes.withUnsafeMutableBytes { out in
                        let out = UnsafeMutableRawBufferPointer(rebasing: out[..<(count * dtype.size)])
                        let v = UnsafeBufferPointer(rebasing: values[..<count])
                        GGUFBlocks.dequantize(part.tensor.type, raw, count: count, into: values)
                        narrow(v, to: dtype, into: out)
                        if inexact { worst = max(worst, Self.maxError(v, UnsafeRawBufferPointer(out), dtype)) }
                        try sink(0, UnsafeRawBufferPointer(out))
                    }
                }
                if inexact { note(part, worst) }
            }
        case .mxfp4:
            var scales: [UInt8] = []
            for part in plan.module.parts {
                var codes = [UInt8](repeating: 0, count: chunkCapacity(part))
                var packed = [UInt8](repeating: 0, count: chunkCapacity(part) / 2)
                try chunks(part) { raw, count, _ in
                    for b in 0..<(count / 32) {
                        let p = raw.baseAddress! + b * 17
                        scales.append(p.load(as: UInt8.self))
                        // ggml: value j in the low nibble of byte j, j+16 in its high
                        // nibble; mlx: value i in nibble i (low nibble first).
                        for j in 0..<16 {
                            let byte = p.load(fromByteOffset: 1 + j, as: UInt8.self)
                            codes[32 * b + j] = byte & 0xF
                            codes[32 * b + j + 16] = byte >> 4
                        }
                    }
                    try Self.pack(codes, count, bits: 4, into: &packed) { try sink(0, $0) }
                }
            }
            try scales.withUnsafeBytes { try sink(1, $0) }
        case .affine(let bits, let scaleType):
            let groups = plan.module.shape.reduce(1, *) / 32
            var scales = [Float](repeating: 0, count: groups)
            var biases = [Float](repeating: 0, count: groups)
            var group = 0  // the module's first group of the current chunk
            for part in plan.module.parts {
                let exact = GGUFBlocks.exactBits(part.tensor.type) != nil
                var worst = 0.0
                var q = [UInt8](repeating: 0, count: chunkCapacity(part))
                var packed = [UInt8](repeating: 0, count: chunkCapacity(part) * bits / 8)
                // Codes already at the output's width are shuffled, not unpacked and packed.
                let direct = exact && GGUFBlocks.exactBits(part.tensor.type) == bits
                try chunks(part) { raw, count, values in
                    if direct {
                        let done = packed.withUnsafeMutableBufferPointer { out in
                            scales.withUnsafeMutableBufferPointer { s in
                                biases.withUnsafeMutableBufferPointer { b in
                                    GGUFBlocks.packedAffine(
                                        part.tensor.type, raw, count: count, packed: out.baseAddress!,
                                        scales: s.baseAddress! + group, biases: b.baseAddress! + group)
                                }
                            }
                        }
                        if done {
                            group += count / 32
                            try packed.withUnsafeBytes { try sink(0, UnsafeRawBufferPointer(rebasing: $0[..<(count * bits / 8)])) }
                            return
                        }
                    }
                    q.withUnsafeMutableBufferPointer { q in
                        scales.withUnsafeMutableBufferPointer { s in
                            biases.withUnsafeMutableBufferPointer { b in
                                let (s, b) = (s.baseAddress! + group, b.baseAddress! + group)
                                if exact {
                                    GGUFBlocks.affine(
                                        part.tensor.type, raw, count: count, q: q.baseAddress!,
                                        scales: s, biases: b)
                                } else {
                                    GGUFBlocks.dequantize(part.tensor.type, raw, count: count, into: values)
                                    let v = UnsafeBufferPointer(rebasing: values[..<count])
                                    Self.requantize8(v, q: q.baseAddress!, scales: s, biases: b)
                                    worst = max(worst, Self.maxError(v, q.baseAddress!, s, b))
                                }
                            }
                        }
                    }
                    group += count / 32
                    try Self.pack(q, count, bits: bits, into: &packed) { try sink(0, $0) }
                }
                if !exact { note(part, worst) }
            }
            try Self.encode(scales, scaleType) { try sink(1, $0) }
            try Self.encode(biases, scaleType) { try sink(2, $0) }
        }
        return errors
    }

    /// The whole outputs in memory (tests, and small modules).
    struct Result {
        var tensors: [[UInt8]]
        /// GGUF tensor name → max |converted − ggml value|.
        var errors: [String: Double]
    }

    func run(_ plan: GGUFModulePlan) throws -> Result {
        var tensors = [[UInt8]](repeating: [], count: plan.outputs.count)
        let errors = try stream(plan) { tensors[$0] += $1 }
        return Result(tensors: tensors, errors: errors)
    }

    // MARK: - Walking a part

    private func chunkRows(_ part: GGUFModelLayout.Part) -> Int {
        max(1, min(part.rows.count, chunkElements / max(1, part.rowElements)))
    }

    private func chunkCapacity(_ part: GGUFModelLayout.Part) -> Int {
        chunkRows(part) * part.rowElements
    }

    /// Calls `body(bytes, count, scratch)` for consecutive runs of the part's rows in Hugging
    /// Face order: `bytes` holds `count` values of the tensor's type (mapped file bytes, or a
    /// copy when rows must be reordered); `scratch` has room for `count` floats.
    private func chunks(
        _ part: GGUFModelLayout.Part,
        _ body: (UnsafeRawBufferPointer, Int, UnsafeMutableBufferPointer<Float>) throws -> Void
    ) throws {
        let data = file.data(part.tensor)
        let rowBytes = part.rowBytes
        let perChunk = chunkRows(part)
        var scratch = [Float](repeating: 0, count: perChunk * part.rowElements)
        var gathered = [UInt8](repeating: 0, count: part.unpermuteHeads == nil ? 0 : perChunk * rowBytes)
        let headDim = part.unpermuteHeads.map { part.rows.count / $0 } ?? 0
        var row = 0
        while row < part.rows.count {
            let n = min(perChunk, part.rows.count - row)
            try scratch.withUnsafeMutableBufferPointer { values in
                guard part.unpermuteHeads != nil else {
                    let start = (part.rows.lowerBound + row) * rowBytes
                    let raw = UnsafeRawBufferPointer(rebasing: data[start..<(start + n * rowBytes)])
                    return try body(raw, n * part.rowElements, values)
                }
                // llama q/k: output row h·hd + j·(hd/2) + i is GGML row h·hd + 2i + j.
                try gathered.withUnsafeMutableBytes { dst in
                    for k in 0..<n {
                        let out = row + k
                        let (h, w) = out.quotientAndRemainder(dividingBy: headDim)
                        let (j, i) = w.quotientAndRemainder(dividingBy: headDim / 2)
                        let from = (part.rows.lowerBound + h * headDim + 2 * i + j) * rowBytes
                        (dst.baseAddress! + k * rowBytes).copyMemory(
                            from: data.baseAddress! + from, byteCount: rowBytes)
                    }
                    try body(
                        UnsafeRawBufferPointer(rebasing: dst[..<(n * rowBytes)]), n * part.rowElements,
                        values)
                }
            }
            row += n
        }
    }

    // MARK: - Pieces

    private static func maxError(
        _ values: UnsafeBufferPointer<Float>, _ bytes: UnsafeRawBufferPointer, _ dtype: DType
    ) -> Double {
        var back = [Float](repeating: 0, count: values.count)
        back.withUnsafeMutableBufferPointer { widen(bytes, dtype, into: $0) }
        return zip(values, back).reduce(0) { max($0, Double(abs($1.0 - $1.1))) }
    }

    private static func maxError(
        _ values: UnsafeBufferPointer<Float>, _ q: UnsafePointer<UInt8>,
        _ scales: UnsafePointer<Float>, _ biases: UnsafePointer<Float>
    ) -> Double {
        var worst = 0.0
        for i in 0..<values.count {
            let v = scales[i / 32] * Float(q[i]) + biases[i / 32]
            worst = max(worst, Double(abs(v - values[i])))
        }
        return worst
    }

    /// Float32 values to affine 8-bit, groups of 32, float32 scales: scale = range / 255,
    /// bias = the group's minimum, codes rounded to nearest. Every value then lies within
    /// half a step of its original (mlx's own quantizer pins the larger edge instead, which
    /// can cost a whole step).
    private static func requantize8(
        _ values: UnsafeBufferPointer<Float>, q: UnsafeMutablePointer<UInt8>,
        scales: UnsafeMutablePointer<Float>, biases: UnsafeMutablePointer<Float>
    ) {
        for g in 0..<(values.count / 32) {
            let group = values[(32 * g)..<(32 * g + 32)]
            let lo = group.min()!
            let hi = group.max()!
            let scale = (hi - lo) / 255
            scales[g] = scale
            biases[g] = lo
            for i in 0..<32 {
                // A constant group (scale 0) is exact with every code 0.
                let code = scale > 0 ? ((values[32 * g + i] - lo) / scale).rounded() : 0
                q[32 * g + i] = UInt8(min(255, max(0, code)))
            }
        }
    }

    /// MLX's packing of `count` codes: each row's codes as one little-endian bit stream,
    /// value i at bit i·bits; passes the packed bytes to `emit`.
    private static func pack(
        _ q: [UInt8], _ count: Int, bits: Int, into out: inout [UInt8],
        _ emit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let size = count * bits / 8
        try out.withUnsafeMutableBufferPointer { out in
            q.withUnsafeBufferPointer { q in
                var acc: UInt64 = 0
                var filled = 0
                var o = 0
                for v in q[..<count] {
                    acc |= UInt64(v) << filled
                    filled += bits
                    while filled >= 8 {
                        out[o] = UInt8(truncatingIfNeeded: acc)
                        o += 1
                        acc >>= 8
                        filled -= 8
                    }
                }
            }
            try emit(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: out[..<size])))
        }
    }

    private static func encode(
        _ values: [Float], _ dtype: DType, _ emit: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        var out = [UInt8](repeating: 0, count: values.count * dtype.size)
        values.withUnsafeBufferPointer { v in out.withUnsafeMutableBytes { narrow(v, to: dtype, into: $0) } }
        try out.withUnsafeBytes(emit)
    }
}

import CKernels
import Foundation
import PhiFormats

/// Hands out the tensors of a model directory as `WeightMatrix` views and float vectors,
/// checking each against the shape its schema module (`ModuleSpec`) gives. Which tensors the
/// directory must hold, and which it may hold beyond those, is `ModelLayout.check`'s job.
///
/// A linear layer `P` is quantized exactly when `P.scales` exists (mlx-lm's rule), with the
/// bits, group size and mode of config.json's `quantization` (its per-layer entry first): so
/// one model may mix affine bit widths (mixed recipes) and modes.
final class TensorReader {
    let weights: ModelWeights
    let quantization: QuantizationConfig?
    /// Run-time LoRA/DoRA corrections, attached to the matrices they name.
    let adapters: [LowRankAdapters]
    /// Copies of tensors whose data is not aligned to their element size (rare: a writer that
    /// does not align offsets); owned by the caller once `takeCopies()` hands them over.
    private var copies: [UnsafeMutableRawPointer] = []

    init(weights: ModelWeights, quantization: QuantizationConfig?, adapters: [LowRankAdapters]) {
        self.weights = weights
        self.quantization = quantization
        self.adapters = adapters
    }

    func takeCopies() -> [UnsafeMutableRawPointer] {
        defer { copies = [] }
        return copies
    }

    /// The weight of a Linear/Embedding module, logically `module.shape` (`[rows, cols]`).
    func matrix(_ module: ModuleSpec) throws -> WeightMatrix {
        precondition(module.isQuantizable && module.shape.count == 2, "\(module.path) is a matrix")
        return try matrix(module.path, rows: module.shape[0], cols: module.shape[1])
    }

    /// The experts of a stacked module (`[experts, out, in]`), one `[out, in]` matrix each:
    /// row slices of the one mapped tensor, or the per-expert tensors `split` names (a Hugging
    /// Face checkpoint, `TensorSetCheck.splitModules`). Nothing is read until a forward pass
    /// routes a token to an expert.
    func experts(_ module: ModuleSpec, split: [String]?) throws -> [WeightMatrix] {
        precondition(module.shape.count == 3, "\(module.path) is a stack of matrices")
        let (experts, rows, cols) = (module.shape[0], module.shape[1], module.shape[2])
        if let split {
            return try split.map {
                try matrix(String($0.dropLast(".weight".count)), rows: rows, cols: cols)
            }
        }
        let stack = try matrix(module.path, rows: experts * rows, cols: cols, stacked: experts)
        return (0..<experts).map { stack.rows(($0 * rows)..<(($0 + 1) * rows)) }
    }

    /// A module's `bias` (a Linear's `[out]`, a LayerNorm's `[n]`) widened to float32.
    func bias(_ module: ModuleSpec) throws -> [Float] {
        precondition(module.biasName != nil, "\(module.path) has a bias")
        return try vector(module.biasName!, count: module.biasShape.reduce(1, *))
    }

    /// A norm's weight widened to float32.
    func vector(_ module: ModuleSpec) throws -> [Float] {
        precondition(module.kind == .norm && module.shape.count == 1, "\(module.path) is a norm")
        return try vector(module.weightName, count: module.shape[0])
    }

    /// The weight of linear/embedding module `module`, logically `[rows, cols]`; stored as
    /// `[stacked, rows / stacked, …]` when `stacked` experts share it.
    func matrix(
        _ module: String, rows: Int, cols: Int, stacked: Int? = nil
    ) throws -> WeightMatrix {
        let layout = Layout(stacked: stacked, rows: rows)
        let weightName = module + ".weight"
        let weight = try tensor(weightName)
        var raw = pk_matrix()
        raw.rows = rows
        raw.cols = cols
        if weights.tensor(module + ".scales") != nil {
            try quantized(module, weight, layout, cols: cols, into: &raw)
        } else {
            raw.kind = try floatKind(weight.info)
            try expect(weight.info, shape: layout.shape(cols))
            raw.w = try aligned(weight)
        }
        // one slot per adapter when any adapts this matrix (stacked experts never are)
        var deltas = adapters.map { $0.deltas[module].map { AppliedDelta($0, weight: raw) } }
        if stacked != nil || deltas.allSatisfy({ $0 == nil }) { deltas = [] }
        return WeightMatrix(name: module, raw: raw, deltas: deltas)
    }

    /// A norm weight `[count]` widened to float32.
    func vector(_ name: String, count: Int) throws -> [Float] {
        let t = try tensor(name)
        let kind = try floatKind(t.info)
        try expect(t.info, shape: [count])
        let bytes = t.file.data(t.info)
        var out = [Float](repeating: 0, count: count)
        if kind == Int32(PK_W_F32) {
            out.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
            return out
        }
        // Copy first: the file gives no alignment guarantee for 16-bit values.
        var halves = [UInt16](repeating: 0, count: count)
        halves.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
        out.withUnsafeMutableBufferPointer { o in
            halves.withUnsafeBufferPointer { h in
                if kind == Int32(PK_W_BF16) {
                    pk_bf16_to_f32(o.baseAddress, h.baseAddress, count)
                } else {
                    pk_f16_to_f32(o.baseAddress, h.baseAddress, count)
                }
            }
        }
        return out
    }

    // MARK: - Pieces

    private func tensor(_ name: String) throws -> (file: SafeTensorsFile, info: TensorInfo) {
        guard let t = weights.tensor(name) else {
            throw TensorSetError.missingTensor(name: name, directory: weights.directory)
        }
        return t
    }

    /// How a tensor's leading dimensions hold `rows` rows: `[rows]`, or
    /// `[stacked, rows / stacked]` for a stack of expert matrices.
    private struct Layout {
        let stacked: Int?
        let rows: Int
        func shape(_ last: Int) -> [Int] {
            stacked.map { [$0, rows / $0, last] } ?? [rows, last]
        }
    }

    private func quantized(
        _ module: String, _ weight: (file: SafeTensorsFile, info: TensorInfo), _ layout: Layout,
        cols: Int, into raw: inout pk_matrix
    ) throws {
        let name = module + ".weight"
        guard let quantization else {
            throw ModelError.inconsistentQuantization(
                name: name, detail: "has scales, but config.json has no 'quantization'")
        }
        guard case .quantized(let group, let bits, let mode) = quantization.layer(module) else {
            throw ModelError.inconsistentQuantization(
                name: name, detail: "has scales, but config.json says it is not quantized")
        }
        if let m = MicroscaledMode(rawValue: mode) {
            try microscaled(module, weight, m, layout, cols: cols, into: &raw)
            return
        }
        try expectPacked(weight.info, layout, cols: cols, group: group, bits: bits)
        let scales = try tensor(module + ".scales")
        let biases = try tensor(module + ".biases")
        let scaleKind = try floatKind(scales.info)
        guard biases.info.dtype == scales.info.dtype else {
            throw ModelError.inconsistentQuantization(
                name: name,
                detail: "scales are \(scales.info.dtype.rawValue) but biases are "
                    + biases.info.dtype.rawValue)
        }
        try expect(scales.info, shape: layout.shape(cols / group))
        try expect(biases.info, shape: layout.shape(cols / group))
        raw.kind = Int32(PK_W_AFFINE)
        raw.bits = Int32(bits)
        raw.group = Int32(group)
        raw.scale_dtype =
            switch Int(scaleKind) {
            case Int(PK_W_F32): Int32(PK_AQ_F32)
            case Int(PK_W_F16): Int32(PK_AQ_F16)
            default: Int32(PK_AQ_BF16)
            }
        raw.w = try aligned(weight)
        raw.scales = try aligned(scales)
        raw.biases = try aligned(biases)
    }

    /// An mxfp4 / nvfp4 / mxfp8 layer: packed codes `[rows, cols*bits/32]` (uint32) and one
    /// uint8 scale per group, no biases (pk_mxfp.h).
    private func microscaled(
        _ module: String, _ weight: (file: SafeTensorsFile, info: TensorInfo),
        _ mode: MicroscaledMode, _ layout: Layout, cols: Int, into raw: inout pk_matrix
    ) throws {
        let name = module + ".weight"
        try expectPacked(
            weight.info, layout, cols: cols, group: mode.groupSize, bits: mode.bits)
        let scales = try tensor(module + ".scales")
        guard scales.info.dtype == .u8 else {
            throw ModelError.inconsistentQuantization(
                name: name,
                detail: "\(mode.rawValue) scales must be U8, found \(scales.info.dtype.rawValue)")
        }
        try expect(scales.info, shape: layout.shape(cols / mode.groupSize))
        if weights.tensor(module + ".biases") != nil {
            throw ModelError.inconsistentQuantization(
                name: name, detail: "\(mode.rawValue) has no biases, but \(module).biases exists")
        }
        raw.kind =
            switch mode {
            case .mxfp4: Int32(PK_W_MXFP4)
            case .nvfp4: Int32(PK_W_NVFP4)
            case .mxfp8: Int32(PK_W_MXFP8)
            }
        raw.bits = Int32(mode.bits)
        raw.group = Int32(mode.groupSize)
        raw.w = try aligned(weight)
        raw.scales = try aligned(scales)
        raw.biases = nil
    }

    /// A packed `.weight`: groups that divide the row, uint32 words `[rows, cols*bits/32]`.
    private func expectPacked(
        _ info: TensorInfo, _ layout: Layout, cols: Int, group: Int, bits: Int
    ) throws {
        guard cols % group == 0 else {
            throw ModelError.inconsistentQuantization(
                name: info.name, detail: "\(cols) columns do not divide into groups of \(group)")
        }
        guard info.dtype == .u32 else {
            throw ModelError.inconsistentQuantization(
                name: info.name, detail: "packed weights must be U32, found \(info.dtype.rawValue)")
        }
        try expect(info, shape: layout.shape(cols * bits / 32))
    }

    private func floatKind(_ info: TensorInfo) throws -> Int32 {
        switch info.dtype {
        case .f32: Int32(PK_W_F32)
        case .f16: Int32(PK_W_F16)
        case .bf16: Int32(PK_W_BF16)
        default: throw ModelError.unsupportedDType(name: info.name, dtype: info.dtype)
        }
    }

    private func expect(_ info: TensorInfo, shape: [Int]) throws {
        guard info.shape == shape else {
            throw ModelError.wrongShape(name: info.name, expected: shape, found: info.shape)
        }
    }

    /// The tensor's data, or an aligned copy when the file puts it at an odd offset.
    private func aligned(
        _ t: (file: SafeTensorsFile, info: TensorInfo)
    ) throws -> UnsafeRawPointer {
        let bytes = t.file.data(t.info)
        guard let base = bytes.baseAddress else {
            throw ModelError.wrongShape(name: t.info.name, expected: [1], found: t.info.shape)
        }
        if Int(bitPattern: base) % t.info.dtype.size == 0 { return base }
        let copy = UnsafeMutableRawPointer.allocate(byteCount: bytes.count, alignment: 64)
        copy.copyMemory(from: base, byteCount: bytes.count)
        copies.append(copy)
        return UnsafeRawPointer(copy)
    }
}

import CKernels
import PhiFormats

/// A low-rank correction of one linear layer, applied at run time instead of being fused into
/// its weight (a LoRA or DoRA fine-tune; the file format is PhiKit's business, this is only
/// the arithmetic):
///
///     LoRA: y = x·Wᵀ + (x·A)·Bᵀ
///     DoRA: y = (m / ‖W + B·Aᵀ‖_row) ⊙ (x·Wᵀ + (x·A)·Bᵀ)
///
/// with A `[inputs, rank]`, B `[outputs, rank]` (the adapter's scale already in it) and m the
/// magnitude `[outputs]`. W stays as it is stored (packed or float): a quantized base keeps
/// its exact weights, and the correction is float32 on top. A bias (Phi's) is added after,
/// as mlx-lm's DoRALinear does.
public struct LowRankDelta: Sendable {
    public let inputs: Int
    public let outputs: Int
    public let rank: Int
    /// [inputs, rank], row-major.
    let a: [Float]
    /// [outputs, rank], row-major, scale included.
    let b: [Float]
    /// DoRA's magnitude [outputs]; nil for LoRA.
    let magnitude: [Float]?

    public init(inputs: Int, outputs: Int, rank: Int, a: [Float], b: [Float], magnitude: [Float]?) {
        precondition(a.count == inputs * rank && b.count == outputs * rank, "low-rank factors' sizes")
        precondition(magnitude.map { $0.count == outputs } ?? true, "one magnitude per output")
        self.inputs = inputs
        self.outputs = outputs
        self.rank = rank
        self.a = a
        self.b = b
        self.magnitude = magnitude
    }
}

/// The low-rank corrections of a model, by module path (`model.layers.3.self_attn.qkv_proj`).
public struct LowRankAdapters: Sendable {
    public var deltas: [String: LowRankDelta]

    public init(_ deltas: [String: LowRankDelta]) { self.deltas = deltas }

    public static let none = LowRankAdapters([:])

    /// The highest rank a run-time correction takes (the kernel keeps x·A on its stack;
    /// `phikit fuse` takes any rank).
    public static let maxRank = 512

    /// Every delta must name a Linear module of the model with its shape: a correction that no
    /// matrix picks up would be silently dropped.
    func check(against layout: ModelLayout) throws {
        for (path, d) in deltas.sorted(by: { $0.key < $1.key }) {
            guard let module = layout.modules.first(where: { $0.path == path }),
                module.kind == .linear, module.shape.count == 2
            else { throw ModelError.adapterDoesNotFit(module: path, detail: "is not a Linear layer of this model") }
            guard d.rank <= Self.maxRank else {
                throw ModelError.adapterDoesNotFit(
                    module: path, detail: "has rank \(d.rank), above the \(Self.maxRank) run time takes")
            }
            guard module.shape == [d.outputs, d.inputs] else {
                throw ModelError.adapterDoesNotFit(
                    module: path,
                    detail: "is \(module.shape), the adapter is [\(d.outputs), \(d.inputs)]")
            }
        }
    }
}

/// A delta bound to its matrix: the factors laid out for the kernel (`pk_lowrank_job`: A
/// `[inputs][rankPad]`, B transposed `[rankPad][outputs]`, the rank padded with zeros to
/// lanes of 8) and DoRA's per-row factor computed once from the stored weight.
final class AppliedDelta: @unchecked Sendable {  // immutable after init
    let delta: LowRankDelta
    /// The rank rounded up to a multiple of 8.
    private let rankPad: Int
    private let a: [Float]
    private let bt: [Float]
    /// m / ‖W + B·Aᵀ‖ per output row (DoRA), nil for LoRA.
    let rowScale: [Float]?

    init(_ delta: LowRankDelta, weight: pk_matrix) {
        self.delta = delta
        let r = delta.rank
        let pad = (r + 7) / 8 * 8
        rankPad = pad
        var a = [Float](repeating: 0, count: delta.inputs * pad)
        for i in 0..<delta.inputs {
            for k in 0..<r { a[i * pad + k] = delta.a[i * r + k] }
        }
        var bt = [Float](repeating: 0, count: pad * delta.outputs)
        for o in 0..<delta.outputs {
            for k in 0..<r { bt[k * delta.outputs + o] = delta.b[o * r + k] }
        }
        self.a = a
        self.bt = bt
        guard let m = delta.magnitude else {
            rowScale = nil
            return
        }
        // The norm of each adapted row, from the weight as the kernels see it (dequantized).
        let n = delta.inputs
        var row = [Float](repeating: 0, count: n)
        var scale = [Float](repeating: 0, count: delta.outputs)
        let isa = pk_matvec_best_isa()
        withUnsafePointer(to: weight) { w in
            for o in 0..<delta.outputs {
                row.withUnsafeMutableBufferPointer { pk_dequantize_rows_isa(isa, w, o, o + 1, $0.baseAddress) }
                var sum = 0.0
                for i in 0..<n {
                    var v = Double(row[i])
                    for k in 0..<r { v += Double(delta.b[o * r + k]) * Double(delta.a[i * r + k]) }
                    sum += v * v
                }
                scale[o] = Float(Double(m[o]) / sum.squareRoot())
            }
        }
        rowScale = scale
    }

    /// The job that adds the correction to the `count` token rows `rows` lists (nil: rows
    /// 0..<count) of y, which holds x·Wᵀ already (x: ldx apart, y: ldy apart). Each token is
    /// computed alone and in a fixed order, so a token's row is the same bits in any block
    /// and next to any other rows (a batch equals each sequence alone). The pointers inside
    /// are valid while `body` runs.
    func withJob<T>(
        _ x: UnsafePointer<Float>, ldx: Int, _ y: UnsafeMutablePointer<Float>, ldy: Int,
        rows: UnsafePointer<Int>?, count: Int, isa: Int32, _ body: (inout pk_lowrank_job) -> T
    ) -> T {
        a.withUnsafeBufferPointer { a in
            bt.withUnsafeBufferPointer { bt in
                func run(_ scale: UnsafePointer<Float>?) -> T {
                    var job = pk_lowrank_job(
                        x: x, ldx: ldx, y: y, ldy: ldy, rows: rows, count: count,
                        inputs: delta.inputs, outputs: delta.outputs, rank_pad: rankPad,
                        a: a.baseAddress, bt: bt.baseAddress, row_scale: scale, isa: isa)
                    return body(&job)
                }
                guard let rowScale else { return run(nil) }
                return rowScale.withUnsafeBufferPointer { run($0.baseAddress) }
            }
        }
    }
}

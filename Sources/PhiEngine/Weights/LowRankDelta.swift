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

    /// Every delta must name a Linear module of the model with its shape: a correction that no
    /// matrix picks up would be silently dropped.
    func check(against layout: ModelLayout) throws {
        for (path, d) in deltas.sorted(by: { $0.key < $1.key }) {
            guard let module = layout.modules.first(where: { $0.path == path }),
                module.kind == .linear, module.shape.count == 2
            else { throw ModelError.adapterDoesNotFit(module: path, detail: "is not a Linear layer of this model") }
            guard module.shape == [d.outputs, d.inputs] else {
                throw ModelError.adapterDoesNotFit(
                    module: path,
                    detail: "is \(module.shape), the adapter is [\(d.outputs), \(d.inputs)]")
            }
        }
    }
}

/// A delta bound to its matrix: the factors laid out for SIMD (the rank padded with zeros to
/// lanes of 8) and DoRA's per-row factor computed once from the stored weight.
final class AppliedDelta: @unchecked Sendable {  // immutable after init
    let delta: LowRankDelta
    /// Vectors of 8 per row: ⌈rank / 8⌉.
    private let lanes: Int
    /// [inputs][lanes] and [outputs][lanes]: A and B, rank padded with zeros.
    private let a: [SIMD8<Float>]
    private let b: [SIMD8<Float>]
    /// m / ‖W + B·Aᵀ‖ per output row (DoRA), nil for LoRA.
    let rowScale: [Float]?

    init(_ delta: LowRankDelta, weight: pk_matrix) {
        self.delta = delta
        let r = delta.rank
        lanes = (r + 7) / 8
        func padded(_ values: [Float], rows: Int) -> [SIMD8<Float>] {
            var out = [SIMD8<Float>](repeating: .zero, count: rows * ((r + 7) / 8))
            for row in 0..<rows {
                for k in 0..<r { out[row * ((r + 7) / 8) + k / 8][k % 8] = values[row * r + k] }
            }
            return out
        }
        a = padded(delta.a, rows: delta.inputs)
        b = padded(delta.b, rows: delta.outputs)
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

    /// y[t] (+)= the correction for each of `tokens` inputs x[t] (x: ldx apart, y: ldy apart),
    /// y holding x·Wᵀ already. Each token alone and in a fixed order, so a token's row is the
    /// same bits in any block (a batch equals each sequence alone).
    func apply(
        _ x: UnsafePointer<Float>, ldx: Int, tokens: Int, _ y: UnsafeMutablePointer<Float>, ldy: Int
    ) {
        let (n, outs, lanes) = (delta.inputs, delta.outputs, lanes)
        a.withUnsafeBufferPointer { a in
            b.withUnsafeBufferPointer { b in
                withUnsafeTemporaryAllocation(of: SIMD8<Float>.self, capacity: lanes) { h in
                    for t in 0..<tokens {
                        let xt = x + t * ldx
                        let yt = y + t * ldy
                        // h = x·A, 8 ranks at a time
                        for v in 0..<lanes { h[v] = .zero }
                        for i in 0..<n {
                            let xi = SIMD8<Float>(repeating: xt[i])
                            let ai = a.baseAddress! + i * lanes
                            for v in 0..<lanes { h[v] = h[v].addingProduct(xi, ai[v]) }
                        }
                        // y += h·Bᵀ, then DoRA's row factor
                        for o in 0..<outs {
                            let bo = b.baseAddress! + o * lanes
                            var z = SIMD8<Float>.zero
                            for v in 0..<lanes { z = z.addingProduct(h[v], bo[v]) }
                            yt[o] += z.sum()
                        }
                        if let s = rowScale {
                            for o in 0..<outs { yt[o] *= s[o] }
                        }
                    }
                }
            }
        }
    }
}

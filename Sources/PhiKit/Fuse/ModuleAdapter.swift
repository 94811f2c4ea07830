import Dispatch
import PhiFormats

/// One Linear module's adapter, widened to float32 (small: rank × (in + out) values), and
/// the arithmetic of mlx-lm's `LoRALinear.fuse` / `DoRALinear.fuse` on rows of the weight,
/// step for step as mlx computes it on the CPU (so the result is the same bits):
///
/// - `delta = ((scale * lora_b.T) @ lora_a.T).astype(W)`: `scale * lora_b` is rounded to
///   lora_b's dtype; the matmul is a reference BLAS `sgemm` (mlx-cpu links netlib's): each
///   output is `((0 + p₀) + p₁) + …` over the rank in float32, every product rounded, no FMA;
///   the sum is rounded to the promoted dtype of the two factors, then to W's dtype;
/// - LoRA: `W + delta`, one float add rounded to W's dtype;
/// - DoRA: that sum, then `m / norm(row)` times it, where `norm` is mlx's
///   `sqrt(sum(square(row)))`: squares rounded to W, summed in order in float32, rounded to
///   W, square root rounded to W; the quotient and the product are in `promote(m, W)`, so a
///   float32 magnitude makes a bfloat16 base's fused weight float32 (as mlx_lm writes it).
struct ModuleAdapter: Sendable {
    let path: String
    let inputs: Int
    let outputs: Int
    let rank: Int
    /// (out, rank): `scale * lora_b[k][o]` rounded to lora_b's dtype, transposed.
    let scaledB: [Float]
    /// (in, rank): lora_a as stored.
    let a: [Float]
    /// promote(lora_a, lora_b): the matmul result's dtype.
    let deltaDType: DType
    /// DoRA's magnitude (out) and its dtype; nil for LoRA.
    let magnitude: [Float]?
    let magnitudeDType: DType?

    /// The fused weight's dtype for a base weight of `weight` dtype.
    func outputDType(weight: DType) -> DType {
        guard let m = magnitudeDType else { return weight }
        return promote(m, weight)
    }

    /// Fuses rows `firstRow ..< firstRow + rows` of the base weight, given in `w` (values
    /// exact in `weightDType`), in place; afterwards they are exact in `outputDType`.
    func apply(
        _ w: UnsafeMutableBufferPointer<Float>, firstRow: Int, rows: Int, weightDType: DType,
        threads: Int
    ) {
        let base = UInt(bitPattern: w.baseAddress!)
        let parts = max(1, min(threads, rows / 16))
        let body: @Sendable (Int) -> Void = { part in
            let begin = rows * part / parts
            let end = rows * (part + 1) / parts
            let p = UnsafeMutablePointer<Float>(bitPattern: base)!
            for r in begin..<end {
                self.fuseRow(
                    UnsafeMutableBufferPointer(start: p + r * self.inputs, count: self.inputs),
                    row: firstRow + r, weightDType: weightDType)
            }
        }
        if parts == 1 { body(0) } else { DispatchQueue.concurrentPerform(iterations: parts, execute: body) }
    }

    private func fuseRow(_ row: UnsafeMutableBufferPointer<Float>, row o: Int, weightDType wt: DType) {
        scaledB.withUnsafeBufferPointer { sb in
            a.withUnsafeBufferPointer { a in
                let b = sb.baseAddress! + o * rank
                for i in 0..<inputs {
                    let ai = a.baseAddress! + i * rank
                    var acc: Float = 0
                    for k in 0..<rank {
                        let product = b[k] * ai[k]
                        acc = acc + product
                    }
                    let delta = rounded(rounded(acc, to: deltaDType), to: wt)
                    row[i] = rounded(row[i] + delta, to: wt)
                }
            }
        }
        guard let m = magnitude, let mType = magnitudeDType else { return }
        var sum: Float = 0
        for i in 0..<inputs {
            let square = rounded(row[i] * row[i], to: wt)
            sum = sum + square
        }
        let norm = rounded(rounded(sum, to: wt).squareRoot(), to: wt)
        let out = promote(mType, wt)
        let normScale = rounded(m[o] / norm, to: out)
        for i in 0..<inputs { row[i] = rounded(normScale * row[i], to: out) }
    }
}

/// mlx's type promotion among the three float types.
func promote(_ a: DType, _ b: DType) -> DType {
    a == b ? a : .f32
}

/// `x` rounded to `dtype` (nearest even), as a float32 again.
@inline(__always)
func rounded(_ x: Float, to dtype: DType) -> Float {
    switch dtype {
    case .bf16: bf16ToFloat(floatToBF16(x))
    case .f16: f16ToFloat(floatToF16(x))
    default: x
    }
}

import CKernels
import PhiFormats

/// One linear layer's weight `[rows, cols]` as it lies in the mapped file: float32/16,
/// bfloat16, MLX affine-quantized (`P.weight` packed u32 + `P.scales` + `P.biases`), or
/// micro-scaled (mxfp4/nvfp4/mxfp8: packed u32 + uint8 `P.scales`).
/// The pointers inside `raw` belong to the model's mapping (or to the model's weights' own copy
/// of a misaligned tensor), which outlives every matrix.
struct WeightMatrix: @unchecked Sendable {  // immutable views into immutable memory
    /// Module path without `.weight` (`model.layers.0.self_attn.qkv_proj`).
    let name: String
    var raw: pk_matrix
    /// Run-time LoRA/DoRA corrections by adapter index (empty: no adapter touches this
    /// matrix): the one a token's sequence selects is added to its row of the product.
    var deltas: [AppliedDelta?] = []

    var rows: Int { raw.rows }
    var cols: Int { raw.cols }

    /// Bytes one pass over the matrix reads (weights, scales and biases): what a decode step
    /// costs in memory traffic.
    var byteCount: Int {
        switch Int(raw.kind) {
        case Int(PK_W_F32): rows * cols * 4
        case Int(PK_W_MXFP4), Int(PK_W_NVFP4), Int(PK_W_MXFP8):
            rows * cols * Int(raw.bits) / 8 + rows * (cols / Int(raw.group))
        case Int(PK_W_AFFINE):
            rows * cols * Int(raw.bits) / 8 + 2 * rows * (cols / Int(raw.group))
                * (raw.scale_dtype == Int32(PK_AQ_F32) ? 4 : 2)
        default: rows * cols * 2
        }
    }

    /// Rows `range` as a matrix of their own, pointing into the same memory (one expert of a
    /// stacked `[experts, out, in]` weight is rows `e·out ..< (e+1)·out`); every kind lays a
    /// row's weights, scales and biases out contiguously, so only the pointers move.
    func rows(_ range: Range<Int>) -> WeightMatrix {
        precondition(range.lowerBound >= 0 && range.upperBound <= rows, "\(name): row slice")
        var slice = raw
        slice.rows = range.count
        let r = range.lowerBound
        switch Int(raw.kind) {
        case Int(PK_W_F32): slice.w = raw.w + r * cols * 4
        case Int(PK_W_F16), Int(PK_W_BF16): slice.w = raw.w + r * cols * 2
        default:  // packed: uint32 words of bits per value, one scale (and bias) per group
            slice.w = raw.w + r * cols * Int(raw.bits) / 8
            let groups = cols / Int(raw.group)
            let scaleBytes =
                raw.kind != Int32(PK_W_AFFINE) ? 1 : raw.scale_dtype == Int32(PK_AQ_F32) ? 4 : 2
            slice.scales = raw.scales + r * groups * scaleBytes
            if let biases = raw.biases { slice.biases = biases + r * groups * scaleBytes }
        }
        precondition(deltas.isEmpty, "\(name): an adapted matrix is not sliced")
        return WeightMatrix(name: name, raw: slice)
    }

    /// Row `r` as float32 into `out` [cols] (an embedding lookup).
    func row(_ r: Int, into out: UnsafeMutablePointer<Float>, isa: Int32) {
        withUnsafePointer(to: raw) { pk_dequantize_rows_isa(isa, $0, r, r + 1, out) }
    }
}

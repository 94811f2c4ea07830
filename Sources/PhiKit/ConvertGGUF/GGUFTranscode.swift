import Dispatch
import PhiFormats

/// How `convert` treats the tensors of a GGUF file.
struct GGUFConvertSettings {
    /// `--dtype`: float tensors are cast to it, and tensors with no exact MLX form become
    /// float in it instead of being re-quantized.
    var dtype: DType?
    /// `--dequantize`: every quantized tensor becomes float (`dtype`, else float32).
    var dequantize = false
    /// `--exact`: refuse any tensor that cannot be brought over exactly.
    var exact = false
}

/// What one output module becomes, decided before anything is written (the safetensors
/// header needs every dtype and shape up front).
struct GGUFModulePlan {
    enum Form: Equatable {
        case float(DType)
        /// MLX affine, group 32.
        case affine(bits: Int, scales: DType)
        /// MLX `mxfp4` (E2M1 codes, E8M0 scale per 32): GGUF MXFP4 as it is.
        case mxfp4
    }

    let module: GGUFModelLayout.Module
    let form: Form
    /// GGUF tensors of this module whose values change: re-quantized to 8-bit, or rounded
    /// into a narrower float type.
    let inexact: [GGUFTensorInfo]

    var outputs: [TensorSpec] {
        let rows = module.shape.first ?? 0
        switch form {
        case .float(let d): return [TensorSpec(name: module.name, dtype: d, shape: module.shape)]
        case .affine(let bits, let scales):
            let base = String(module.name.dropLast(".weight".count))
            let cols = module.shape[1]
            return [
                TensorSpec(name: module.name, dtype: .u32, shape: [rows, cols * bits / 32]),
                TensorSpec(name: base + ".scales", dtype: scales, shape: [rows, cols / 32]),
                TensorSpec(name: base + ".biases", dtype: scales, shape: [rows, cols / 32]),
            ]
        case .mxfp4:
            let base = String(module.name.dropLast(".weight".count))
            let cols = module.shape[1]
            return [
                TensorSpec(name: module.name, dtype: .u32, shape: [rows, cols / 8]),
                TensorSpec(name: base + ".scales", dtype: .u8, shape: [rows, cols / 32]),
            ]
        }
    }

    static func make(
        _ m: GGUFModelLayout.Module, file: GGUFFile, settings s: GGUFConvertSettings
    ) throws -> GGUFModulePlan {
        let floats: Set<GGMLType> = [.f32, .f16, .bf16]
        let types = m.parts.map(\.tensor.type)
        for part in m.parts where !GGUFBlocks.canDecode(part.tensor.type) {
            throw GGUFConvertError.unsupportedType(
                path: file.path, tensor: part.tensor.name, type: part.tensor.type.name)
        }
        let allFloat = types.allSatisfy(floats.contains)
        let inexactTypes = m.parts.filter {
            !floats.contains($0.tensor.type) && GGUFBlocks.exactBits($0.tensor.type) == nil
        }
        if !m.isMatrix || allFloat || s.dequantize || (s.dtype != nil && !inexactTypes.isEmpty) {
            // Float output: exact when every part's values fit the chosen type.
            let same = Set(types).count == 1 && floats.contains(types[0])
            let dtype = s.dtype ?? (same ? DType(types[0]) : .f32)
            let lossy = m.parts.filter { !GGUFModulePlan.fits($0.tensor.type, in: dtype) }
            if s.exact, let first = lossy.first {
                throw GGUFConvertError.notExact(
                    path: file.path, tensors: [first.tensor.name], type: first.tensor.type.name)
            }
            return GGUFModulePlan(module: m, form: .float(dtype), inexact: lossy.map(\.tensor))
        }
        // MXFP4 has the same codes and scale bytes as mlx's mxfp4 (ggml doubles the table and
        // halves the scale): exact unless --dtype / --dequantize asked for float above.
        if types.allSatisfy({ $0 == .mxfp4 }) {
            return GGUFModulePlan(module: m, form: .mxfp4, inexact: [])
        }
        // Affine: exact parts keep their codes; float parts and types with no exact form
        // are re-quantized to 8 bits. A fused tensor takes the widest part's bits (a code
        // widens exactly: same q, scale and bias).
        var bits = 0
        var needsF32 = false
        var inexact: [GGUFTensorInfo] = []
        for part in m.parts {
            let t = part.tensor
            if let b = GGUFBlocks.exactBits(t.type) {
                bits = max(bits, b)
                needsF32 = needsF32 || !scalesFitF16(t, file)
            } else {
                bits = 8
                needsF32 = true
                inexact.append(t)
            }
        }
        if s.exact, let first = inexact.first {
            throw GGUFConvertError.notExact(
                path: file.path, tensors: inexact.map(\.name), type: first.type.name)
        }
        return GGUFModulePlan(
            module: m, form: .affine(bits: bits, scales: needsF32 ? .f32 : .f16),
            inexact: inexact)
    }

    /// Whether decoding `type` and storing it as `dtype` loses nothing.
    static func fits(_ type: GGMLType, in dtype: DType) -> Bool {
        switch dtype {
        case .f32: return true  // every GGML decoder yields float32 values
        case .f16: return type == .f16
        case .bf16: return type == .bf16
        default: return false
        }
    }

    /// Whether every scale and bias of an exact type is an fp16 value: Q4_1/Q5_1 store them
    /// in fp16; Q4_0, Q5_0 and Q8_0 biases are −8d, −16d, −128d, which overflow fp16 for a
    /// large d; K-quant scales are products d·sc that need float32.
    static func scalesFitF16(_ t: GGUFTensorInfo, _ file: GGUFFile) -> Bool {
        let limit: Float
        switch t.type {
        case .q4_1, .q5_1: return true
        case .q4_0: limit = 65504 / 8
        case .q5_0: limit = 65504 / 16
        case .q8_0: limit = 65504 / 128
        default: return false
        }
        let data = file.data(t)
        let blocks = t.byteCount / t.type.blockBytes
        var largest: Float = 0
        for b in 0..<blocks {
            largest = max(largest, abs(GGUFBlocks.f16(data.baseAddress!, b * t.type.blockBytes)))
        }
        // Planning reads every block before anything is written: without this the whole
        // file stays resident (peak RSS = file size) until the transcoder releases it.
        file.release(t)
        return largest <= limit
    }
}

extension DType {
    /// The float type of a GGML float type.
    init(_ t: GGMLType) {
        switch t {
        case .f16: self = .f16
        case .bf16: self = .bf16
        default: self = .f32
        }
    }
}

import PhiFormats

/// The weights of a model directory do not fit its config.json: a tensor has the wrong shape
/// or dtype, or is quantized differently from what the config says (a missing or foreign
/// tensor is a `TensorSetError`). Every case names the tensor; all are bad model data (exit 65).
public enum ModelError: UserFacingError, Equatable {
    case wrongShape(name: String, expected: [Int], found: [Int])
    case unsupportedDType(name: String, dtype: DType)
    /// Packed weights whose scales/biases or quantization settings do not agree.
    case inconsistentQuantization(name: String, detail: String)
    /// A run-time adapter's correction (`LowRankDelta`) for a module that is not a Linear
    /// layer of this model, or of another shape.
    case adapterDoesNotFit(module: String, detail: String)

    public var message: String {
        switch self {
        case .wrongShape(let name, let expected, let found):
            "tensor '\(name)' has shape \(found), expected \(expected) from config.json"
        case .unsupportedDType(let name, let dtype):
            "tensor '\(name)' has dtype \(dtype.rawValue); phikit runs F32, F16 and BF16 weights "
                + "or MLX affine-quantized U32 weights"
        case .inconsistentQuantization(let name, let detail):
            "quantized tensor '\(name)': \(detail)"
        case .adapterDoesNotFit(let module, let detail):
            "adapter for module '\(module)': the module \(detail)"
        }
    }

    public var hint: String? {
        if case .adapterDoesNotFit = self { return "is this adapter for this base model?" }
        return "the weights do not match config.json; download or convert the model again"
    }

    public var exitCode: ExitCode { .dataError }
}

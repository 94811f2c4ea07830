import PhiFormats

/// The weights of a model directory do not fit its config.json: a tensor is missing, has the
/// wrong shape or dtype, is quantized differently from what the config says, or is not part
/// of a Phi-3 model at all. Every case names the tensor; all are bad model data (exit 65).
public enum ModelError: UserFacingError, Equatable {
    case missingTensor(name: String, directory: String)
    case wrongShape(name: String, expected: [Int], found: [Int])
    case unsupportedDType(name: String, dtype: DType)
    /// A tensor no Phi-3 model of this config has (another layer count, another architecture).
    case unexpectedTensor(name: String, directory: String)
    /// Packed weights whose scales/biases or quantization settings do not agree.
    case inconsistentQuantization(name: String, detail: String)

    public var message: String {
        switch self {
        case .missingTensor(let name, let directory):
            "tensor '\(name)' is missing from the weights in \(directory)"
        case .wrongShape(let name, let expected, let found):
            "tensor '\(name)' has shape \(found), expected \(expected) from config.json"
        case .unsupportedDType(let name, let dtype):
            "tensor '\(name)' has dtype \(dtype.rawValue); phikit runs F32, F16 and BF16 weights "
                + "or MLX affine-quantized U32 weights"
        case .unexpectedTensor(let name, let directory):
            "tensor '\(name)' in \(directory) is not part of the model config.json describes"
        case .inconsistentQuantization(let name, let detail):
            "quantized tensor '\(name)': \(detail)"
        }
    }

    public var hint: String? {
        "the weights do not match config.json; download or convert the model again"
    }

    public var exitCode: ExitCode { .dataError }
}

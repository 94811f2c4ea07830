/// Why a GGUF file could not be used or converted. Everything except `io` is found before the
/// first byte of output is written.
public enum GGUFConvertError: UserFacingError, Equatable {
    /// A command that needs an MLX model directory was given a GGUF file.
    case ggufGiven(path: String)
    case unsupportedArchitecture(path: String, architecture: String)
    /// A hyperparameter the output's config.json needs is absent or unusable.
    case missingMetadata(path: String, key: String)
    case missingTensor(path: String, tensor: String)
    case unexpectedTensor(path: String, tensor: String)
    case wrongShape(path: String, tensor: String, expected: [Int], actual: [Int])
    /// A GGML type phikit has no decoder for (IQ*, TQ*, …).
    case unsupportedType(path: String, tensor: String, type: String)
    /// `--exact` and a tensor whose type has no exact MLX form.
    case notExact(path: String, tensors: [String], type: String)
    case badTokenizer(path: String, detail: String)

    public var message: String {
        switch self {
        case .ggufGiven(let path):
            "\(path) is a GGUF file (llama.cpp's format), not an MLX model directory"
        case .unsupportedArchitecture(let path, let arch):
            "\(path): architecture '\(arch)' is not supported (phikit converts "
                + Architectures.ggufNames.joined(separator: ", ") + ")"
        case .missingMetadata(let path, let key):
            "\(path): metadata '\(key)' is missing or not a usable value"
        case .missingTensor(let path, let tensor): "\(path): tensor '\(tensor)' is missing"
        case .unexpectedTensor(let path, let tensor):
            "\(path): tensor '\(tensor)' is not part of this architecture"
        case .wrongShape(let path, let tensor, let expected, let actual):
            "\(path): tensor '\(tensor)' has shape \(actual), the metadata implies \(expected)"
        case .unsupportedType(let path, let tensor, let type):
            "\(path): tensor '\(tensor)' is \(type), which phikit cannot decode"
        case .notExact(let path, let tensors, let type):
            "\(path): \(tensors.count) \(type) tensors (first '\(tensors[0])') have no exact MLX form"
        case .badTokenizer(let path, let detail): "\(path): tokenizer metadata \(detail)"
        }
    }

    public var hint: String? {
        switch self {
        case .ggufGiven(let path): "convert it first: phikit convert \(path)"
        case .notExact:
            "drop --exact to re-quantize them (the summary lists each one's error), or use a Q8_0/Q4_0 GGUF"
        case .unsupportedType:
            "convert from the original Hugging Face weights, or from a GGUF of another type"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .ggufGiven, .notExact: .usage
        default: .dataError
        }
    }
}

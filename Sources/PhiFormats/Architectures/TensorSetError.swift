/// A checkpoint's tensor set that does not fit its config.json. The engine and `convert`
/// throw it; `verify` and `inspect` report the same words (`problem`) per tensor.
public enum TensorSetError: UserFacingError, Equatable {
    case missingTensor(name: String, directory: String)
    /// A tensor the architecture has no place for and the leftover policy does not drop.
    case unexpectedTensor(name: String, file: String)

    public var message: String {
        switch self {
        case .missingTensor(let name, let directory):
            "tensor '\(name)' \(problem) from the weights in \(directory)"
        case .unexpectedTensor(let name, let file):
            "tensor '\(name)' in \(file) \(problem)"
        }
    }

    /// The finding without the tensor's name and place.
    public var problem: String {
        switch self {
        case .missingTensor: "is missing"
        case .unexpectedTensor: "is not part of the model config.json describes"
        }
    }

    public var hint: String? {
        "the weights do not match config.json; download or convert the model again"
    }

    public var exitCode: ExitCode { .dataError }
}

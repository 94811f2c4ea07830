import PhiFormats

/// Why `convert` refused or failed. Everything about the source is checked before the first
/// byte of output is written, so each of these (except `io`) leaves the disk untouched.
public enum ConvertError: UserFacingError, Equatable {
    /// The output exists and `--force` was not given.
    case outputExists(path: String)
    /// The output would replace, contain or live inside the source; `detail` says which.
    case outputIsSource(path: String, detail: String)
    /// `--force` on an existing output that is not a model folder: `foreign` names what in it
    /// would have been deleted.
    case outputNotAModel(path: String, foreign: String)
    case quantizeAndDequantize
    /// `-q` on a model that is already MLX-quantized.
    case alreadyQuantized(directory: String, bits: Int)
    /// `--dequantize` on a model with no quantized tensors.
    case notQuantized(directory: String)
    case wrongShape(name: String, file: String, expected: [Int], actual: [Int])
    case wrongDType(name: String, file: String, dtype: DType, expected: String)
    /// A packed `.weight`/`.scales` pair that config.json's `quantization` does not describe.
    case inconsistentQuantization(module: String, detail: String)
    case badOption(String, hint: String?)
    /// Creating, writing or renaming the output failed.
    case io(path: String, detail: String)

    public var message: String {
        switch self {
        case .outputExists(let path): "\(path) already exists"
        case .outputIsSource(let path, let detail):
            "refusing to write the output \(path): \(detail)"
        case .outputNotAModel(let path, let foreign):
            "refusing to replace \(path): it is not a model folder (\(foreign)) and would be deleted"
        case .quantizeAndDequantize: "choose either --quantize or --dequantize, not both"
        case .alreadyQuantized(let dir, let bits): "\(dir) is already quantized (\(bits)-bit)"
        case .notQuantized(let dir): "\(dir) has no quantized tensors to dequantize"
        case .wrongShape(let name, let file, let expected, let actual):
            "\(file): tensor '\(name)' has shape \(actual), config.json implies \(expected)"
        case .wrongDType(let name, let file, let dtype, let expected):
            "\(file): tensor '\(name)' is \(dtype.pythonName), expected \(expected)"
        case .inconsistentQuantization(let module, let detail):
            "quantized layer '\(module)': \(detail)"
        case .badOption(let message, _): message
        case .io(let path, let detail): "\(path): \(detail)"
        }
    }

    public var hint: String? {
        switch self {
        case .outputExists: "pass --force to replace it, or -o to choose another directory"
        case .outputIsSource: "choose an -o directory outside the source model"
        case .outputNotAModel:
            "--force replaces only an earlier model output; choose another -o directory"
        case .alreadyQuantized: "convert --dequantize first to re-quantize with other settings"
        case .notQuantized: "drop --dequantize (use --dtype to change the float type)"
        case .wrongShape:
            "the weights do not match config.json; is the download complete and unmodified?"
        case .badOption(_, let hint): hint
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .outputExists, .outputIsSource, .outputNotAModel, .quantizeAndDequantize,
            .alreadyQuantized,
            .notQuantized, .badOption:
            .usage
        case .wrongShape, .wrongDType, .inconsistentQuantization:
            .dataError
        case .io: .ioError
        }
    }
}

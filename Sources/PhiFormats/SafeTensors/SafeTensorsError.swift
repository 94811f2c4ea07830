/// Everything that can be wrong with a .safetensors file, one case per kind of damage, each
/// naming the file (and the tensor where there is one) so the user knows which shard to fetch
/// again. The reader checks all of them before handing out any tensor.
public enum SafeTensorsError: UserFacingError, Equatable {
    /// Shorter than the 8-byte header length.
    case fileTooSmall(path: String, size: Int)
    /// The header length points past the end of the file.
    case headerLengthPastEnd(path: String, headerLength: UInt64, fileSize: Int)
    /// The header length is over `SafeTensorsFile.maxHeaderSize` (100 MB, as safetensors).
    case headerTooLarge(path: String, headerLength: UInt64)
    case headerNotUTF8(path: String)
    /// `offset` is relative to the start of the header JSON.
    case invalidJSON(path: String, offset: Int, reason: String)
    case headerNotObject(path: String)
    case duplicateTensor(path: String, tensor: String)
    /// A tensor entry that is not an object, or lacks / mistypes `dtype`, `shape` or `data_offsets`.
    case badTensorEntry(path: String, tensor: String, reason: String)
    case unknownDType(path: String, tensor: String, dtype: String)
    /// A negative, non-integer or overflowing dimension.
    case badShape(path: String, tensor: String, reason: String)
    /// The byte range's length is not shape × dtype size.
    case sizeMismatch(path: String, tensor: String, expected: Int, actual: Int)
    /// begin > end, or end past the data section.
    case offsetsOutOfBounds(path: String, tensor: String, begin: Int, end: Int, dataSize: Int)
    case offsetsOverlap(path: String, tensor: String, other: String)
    /// Bytes no tensor covers: between two tensors (`tensor` is the one after the gap) or at
    /// the end of the file (`tensor` is nil).
    case gapBetweenTensors(path: String, tensor: String?, gapStart: Int, gapEnd: Int)
    /// `__metadata__` that is not an object of strings.
    case badMetadata(path: String, reason: String)
    /// The writer was given fewer or more bytes than the tensor specs add up to.
    case writtenSizeMismatch(path: String, expected: Int, written: Int)
    /// Reading, writing or mapping the file failed.
    case io(FileError)

    public var message: String {
        switch self {
        case .fileTooSmall(let path, let size):
            "\(path): file is \(size) bytes, too small to be a safetensors file"
        case .headerLengthPastEnd(let path, let length, let size):
            "\(path): header length \(length) goes past the end of the \(size)-byte file"
        case .headerTooLarge(let path, let length):
            "\(path): header length \(length) is over the \(SafeTensorsFile.maxHeaderSize)-byte limit"
        case .headerNotUTF8(let path):
            "\(path): header is not valid UTF-8"
        case .invalidJSON(let path, let offset, let reason):
            "\(path): header is not valid JSON at byte \(offset): \(reason)"
        case .headerNotObject(let path):
            "\(path): header is not a JSON object"
        case .duplicateTensor(let path, let tensor):
            "\(path): tensor '\(tensor)' appears more than once"
        case .badTensorEntry(let path, let tensor, let reason):
            "\(path): tensor '\(tensor)': \(reason)"
        case .unknownDType(let path, let tensor, let dtype):
            "\(path): tensor '\(tensor)' has unsupported dtype '\(dtype)'"
        case .badShape(let path, let tensor, let reason):
            "\(path): tensor '\(tensor)' has a bad shape: \(reason)"
        case .sizeMismatch(let path, let tensor, let expected, let actual):
            "\(path): tensor '\(tensor)' should take \(expected) bytes but its offsets span \(actual)"
        case .offsetsOutOfBounds(let path, let tensor, let begin, let end, let dataSize):
            "\(path): tensor '\(tensor)' data_offsets [\(begin), \(end)] are outside the \(dataSize)-byte data section"
        case .offsetsOverlap(let path, let tensor, let other):
            "\(path): tensors '\(other)' and '\(tensor)' overlap"
        case .gapBetweenTensors(let path, let tensor?, let start, let end):
            "\(path): bytes \(start)..<\(end) before tensor '\(tensor)' belong to no tensor"
        case .gapBetweenTensors(let path, nil, let start, let end):
            "\(path): bytes \(start)..<\(end) at the end of the data belong to no tensor"
        case .badMetadata(let path, let reason):
            "\(path): __metadata__ \(reason)"
        case .writtenSizeMismatch(let path, let expected, let written):
            "\(path): wrote \(written) bytes of tensor data, expected \(expected)"
        case .io(let error):
            error.message
        }
    }

    public var hint: String? {
        switch self {
        case .io(let error): error.hint
        case .writtenSizeMismatch: nil
        case .unknownDType: "phikit reads \(DType.allCases.map(\.rawValue).joined(separator: ", "))"
        default: "the file is truncated or corrupt; download it again"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .io(let error): error.exitCode
        case .writtenSizeMismatch: .software  // a bug in the caller, not bad data
        default: .dataError
        }
    }
}

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
        case let .fileTooSmall(path, size):
            "\(path): file is \(size) bytes, too small to be a safetensors file"
        case let .headerLengthPastEnd(path, length, size):
            "\(path): header length \(length) goes past the end of the \(size)-byte file"
        case let .headerTooLarge(path, length):
            "\(path): header length \(length) is over the \(SafeTensorsFile.maxHeaderSize)-byte limit"
        case let .headerNotUTF8(path):
            "\(path): header is not valid UTF-8"
        case let .invalidJSON(path, offset, reason):
            "\(path): header is not valid JSON at byte \(offset): \(reason)"
        case let .headerNotObject(path):
            "\(path): header is not a JSON object"
        case let .duplicateTensor(path, tensor):
            "\(path): tensor '\(tensor)' appears more than once"
        case let .badTensorEntry(path, tensor, reason):
            "\(path): tensor '\(tensor)': \(reason)"
        case let .unknownDType(path, tensor, dtype):
            "\(path): tensor '\(tensor)' has unsupported dtype '\(dtype)'"
        case let .badShape(path, tensor, reason):
            "\(path): tensor '\(tensor)' has a bad shape: \(reason)"
        case let .sizeMismatch(path, tensor, expected, actual):
            "\(path): tensor '\(tensor)' should take \(expected) bytes but its offsets span \(actual)"
        case let .offsetsOutOfBounds(path, tensor, begin, end, dataSize):
            "\(path): tensor '\(tensor)' data_offsets [\(begin), \(end)] are outside the \(dataSize)-byte data section"
        case let .offsetsOverlap(path, tensor, other):
            "\(path): tensors '\(other)' and '\(tensor)' overlap"
        case let .gapBetweenTensors(path, tensor?, start, end):
            "\(path): bytes \(start)..<\(end) before tensor '\(tensor)' belong to no tensor"
        case let .gapBetweenTensors(path, nil, start, end):
            "\(path): bytes \(start)..<\(end) at the end of the data belong to no tensor"
        case let .badMetadata(path, reason):
            "\(path): __metadata__ \(reason)"
        case let .writtenSizeMismatch(path, expected, written):
            "\(path): wrote \(written) bytes of tensor data, expected \(expected)"
        case let .io(error):
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

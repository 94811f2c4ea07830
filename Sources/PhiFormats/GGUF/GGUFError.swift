/// Everything that can be wrong with a GGUF file. Each case names the file and the field (the
/// metadata key, the tensor) so a lying file is reported, never trusted: the reader checks
/// every count, length, offset and dimension against the bytes that are actually there.
public enum GGUFError: UserFacingError, Equatable {
    /// The first four bytes are not `GGUF`.
    case notGGUF(path: String)
    case unsupportedVersion(path: String, version: UInt32)
    /// A field runs past the end of the file (`field` says which: "metadata count",
    /// "key of metadata entry 3", "value of 'general.name'", "dimensions of tensor 'x'").
    case truncated(path: String, field: String, offset: Int)
    /// A count or length that the file cannot hold (it would need more bytes than are left).
    case countTooLarge(path: String, field: String, count: UInt64, available: Int)
    case keyNotUTF8(path: String, index: Int)
    case stringNotUTF8(path: String, field: String)
    case duplicateKey(path: String, key: String)
    case unknownValueType(path: String, field: String, type: UInt32)
    /// Arrays nested deeper than `GGUFFile.maxArrayDepth`.
    case nestingTooDeep(path: String, field: String)
    /// A metadata key phikit relies on has the wrong type or value (`general.alignment`).
    case badMetadata(path: String, key: String, reason: String)
    /// A value that its type does not allow (a bool that is neither 0 nor 1).
    case badValue(path: String, field: String, reason: String)
    case duplicateTensor(path: String, tensor: String)
    case unknownTensorType(path: String, tensor: String, type: UInt32)
    case badDimensions(path: String, tensor: String, reason: String)
    case misalignedTensor(path: String, tensor: String, offset: UInt64, alignment: Int)
    /// The tensor's bytes (`offset`, `size` relative to the data section) are not all in the
    /// file.
    case tensorPastEnd(path: String, tensor: String, offset: UInt64, size: Int, dataSize: Int)
    case tensorsOverlap(path: String, tensor: String, other: String)
    case io(FileError)

    public var message: String {
        switch self {
        case .notGGUF(let path):
            "\(path): not a GGUF file (it does not start with 'GGUF')"
        case .unsupportedVersion(let path, let version):
            "\(path): GGUF version \(version) is not supported (phikit reads versions 2 and 3)"
        case .truncated(let path, let field, let offset):
            "\(path): \(field) at byte \(offset) runs past the end of the file"
        case .countTooLarge(let path, let field, let count, let available):
            "\(path): \(field) is \(count), more than the \(available) bytes left can hold"
        case .keyNotUTF8(let path, let index):
            "\(path): the key of metadata entry \(index) is not valid UTF-8"
        case .stringNotUTF8(let path, let field):
            "\(path): \(field) is not valid UTF-8"
        case .duplicateKey(let path, let key):
            "\(path): metadata key '\(key)' appears more than once"
        case .unknownValueType(let path, let field, let type):
            "\(path): \(field) has unknown value type \(type)"
        case .nestingTooDeep(let path, let field):
            "\(path): \(field) nests arrays more than \(GGUFFile.maxArrayDepth) deep"
        case .badMetadata(let path, let key, let reason):
            "\(path): metadata '\(key)' \(reason)"
        case .badValue(let path, let field, let reason):
            "\(path): \(field) \(reason)"
        case .duplicateTensor(let path, let tensor):
            "\(path): tensor '\(tensor)' appears more than once"
        case .unknownTensorType(let path, let tensor, let type):
            "\(path): tensor '\(tensor)' has unknown type \(type)"
        case .badDimensions(let path, let tensor, let reason):
            "\(path): tensor '\(tensor)' has bad dimensions: \(reason)"
        case .misalignedTensor(let path, let tensor, let offset, let alignment):
            "\(path): tensor '\(tensor)' offset \(offset) is not a multiple of the alignment \(alignment)"
        case .tensorPastEnd(let path, let tensor, let offset, let size, let dataSize):
            "\(path): tensor '\(tensor)' (\(size) bytes at data offset \(offset)) runs past the end of the \(dataSize)-byte data section"
        case .tensorsOverlap(let path, let tensor, let other):
            "\(path): tensors '\(other)' and '\(tensor)' overlap"
        case .io(let error):
            error.message
        }
    }

    public var hint: String? {
        switch self {
        case .io(let error): error.hint
        case .notGGUF: "give a .gguf file written by llama.cpp or the gguf Python package"
        case .unsupportedVersion(_, let v) where v == 1:
            "re-save it with a current llama.cpp (GGUF v1 is from 2023)"
        case .unsupportedVersion:
            "a byte-swapped version means a big-endian GGUF; phikit reads little-endian files"
        case .unknownTensorType:
            "the file may come from a newer llama.cpp; phikit knows GGML types up to Q1_0 (41)"
        default: "the file is truncated or corrupt; download it again"
        }
    }

    public var exitCode: ExitCode {
        if case .io(let error) = self { return error.exitCode }
        return .dataError
    }
}

import Foundation
import PhiFormats

/// What `phikit inspect FILE.gguf` shows: the hyperparameters llama.cpp reads, the metadata
/// keys (long arrays summarised), and the tensor table with GGML types.
///
/// Its `Encodable` form is `phikit inspect FILE.gguf --json`:
/// ```
/// { "schema_version": 1, "path": "…", "kind": "gguf", "version": 3, "alignment": 32,
///   "file_bytes": 2393232672, "model": { "architecture": "phi3", "context_length": 131072,
///   "embedding_length": 3072, "block_count": 32, "head_count": 32, "head_count_kv": 32,
///   "rope_freq_base": 10000, "rope_dimension_count": 96, "tokenizer_model": "llama",
///   "vocabulary_size": 32064, "has_chat_template": true, "file_type": 15, … },
///   "metadata": [{"key": "general.name", "type": "string", "value": "Phi 3.5 Mini"}],
///   "tensors": [{"name": "token_embd.weight", "type": "Q4_K", "shape": [32064, 3072],
///                "bytes": 55418880}],                         // in file order
///   "type_counts": {"Q4_K": 97, "Q6_K": 17, "F32": 81}, "parameter_count": 3821079552,
///   "tensor_bytes": 2393153536 }
/// ```
public struct GGUFInspectReport: Sendable, Encodable {
    public struct Entry: Sendable, Encodable {
        public var key: String
        public var type: String
        /// The value as text; arrays longer than 8 show their first values and the count.
        public var value: String
    }

    public struct Tensor: Sendable, Encodable {
        public var name: String
        public var type: String
        /// Row-major shape (ggml's dimensions reversed), as safetensors would write it.
        public var shape: [Int]
        public var bytes: Int
    }

    public var schemaVersion = 1
    public var path: String
    public var kind = "gguf"
    public var version: Int
    public var alignment: Int
    public var fileBytes: Int
    public var model: GGUFHyperparameters
    public var metadata: [Entry]
    public var tensors: [Tensor]
    public var typeCounts: [String: Int]
    public var parameterCount: Int
    public var tensorBytes: Int

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case path, kind, version, alignment
        case fileBytes = "file_bytes"
        case model, metadata, tensors
        case typeCounts = "type_counts"
        case parameterCount = "parameter_count"
        case tensorBytes = "tensor_bytes"
    }
}

/// Whether `path` is a GGUF file: its name ends in `.gguf` or it starts with the magic.
public func isGGUF(path: String) -> Bool {
    if path.lowercased().hasSuffix(".gguf") { return true }
    guard let handle = FileHandle(forReadingAtPath: path) else { return false }
    defer { try? handle.close() }
    return (try? handle.read(upToCount: 4)) == Data("GGUF".utf8)
}

/// Reads the header, metadata and tensor infos of a GGUF file (never the tensor data).
public func inspectGGUF(path: String) throws -> GGUFInspectReport {
    guard FileManager.default.fileExists(atPath: path) else {
        throw InspectError.notFound(path: path)
    }
    let file = try GGUFFile(path: path)
    var counts: [String: Int] = [:]
    for t in file.tensors { counts[t.type.name, default: 0] += 1 }
    return GGUFInspectReport(
        path: path, version: Int(file.version), alignment: file.alignment,
        fileBytes: file.fileSize, model: GGUFHyperparameters(file),
        metadata: file.metadata.map {
            .init(key: $0.key, type: $0.value.typeName, value: summary($0.value))
        },
        tensors: file.tensors.map {
            .init(name: $0.name, type: $0.type.name, shape: $0.shape, bytes: $0.byteCount)
        },
        typeCounts: counts,
        parameterCount: file.tensors.reduce(0) { $0 + $1.elementCount },
        tensorBytes: file.tensors.reduce(0) { $0 + $1.byteCount })
}

/// A metadata value in one line: strings quoted and cut at 60 characters (a chat template
/// is shown by its length), arrays by their first 8 values and count.
func summary(_ v: GGUFValue) -> String {
    switch v {
    case .string(let s):
        let line = s.replacingOccurrences(of: "\n", with: "\\n")
        return line.count > 60 ? "\"\(line.prefix(57))…\" (\(s.utf8.count) bytes)" : "\"\(line)\""
    case .array(let a):
        let shown = a.values.prefix(8).map(summary).joined(separator: ", ")
        return a.count > 8 ? "[\(shown), …] (\(a.count) values)" : "[\(shown)]"
    case .bool(let b): return b ? "true" : "false"
    case .float32(let f): return "\(f)"
    case .float64(let d): return "\(d)"
    case .uint64(let u): return "\(u)"
    default: return v.intValue.map(String.init) ?? "\(v)"
    }
}

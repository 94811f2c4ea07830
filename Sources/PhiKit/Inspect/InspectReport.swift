import PhiFormats

/// What `phikit inspect` found in a .safetensors file or a model directory. A value, so the
/// CLI can print it as a table or JSON and tests can check it directly.
///
/// Its `Encodable` form is the documented `phikit inspect --json` object. Keys are snake_case
/// and stable; new keys may be added, existing ones keep their meaning (`schema_version` bumps
/// if that ever has to change):
/// ```
/// { "schema_version": 1, "path": "…", "kind": "file" | "directory",
///   "files":   [{"name": "model.safetensors", "bytes": 123, "tensor_count": 3}],
///   "tensors": [{"name": "…", "dtype": "BF16", "shape": [32064, 3072], "bytes": 197001216,
///                "parameters": 98500608, "file": "model-00002-of-00002.safetensors",
///                "quantized_bits": null}],            // sorted by name
///   "tensor_count": 195, "parameter_count": 3821079552, "tensor_bytes": 7642159104,
///   "dtype_bytes": {"BF16": 7642159104},
///   "quantization": null | {"bits": 4, "group_size": 64, "mode": "affine",
///                           "source": "config" | "tensors" | "config+tensors",
///                           "quantized_tensors": 129},
///   "config": null | {"model_type": "phi3", "hidden_size": 3072, "intermediate_size": 8192,
///                     "layers": 32, "attention_heads": 32, "kv_heads": 32, "head_dim": 96,
///                     "vocab_size": 32064, "max_position_embeddings": 131072,
///                     "rope_scaling": "longrope" | null, "partial_rotary_factor": 1.0,
///                     "tie_word_embeddings": false, "torch_dtype": "BF16" | null},
///   "metadata": {"format": "pt"},                       // safetensors __metadata__, merged
///   "warnings": ["…"] }
/// ```
public struct InspectReport: Sendable, Equatable, Encodable {
    public enum Kind: String, Sendable, Encodable { case file, directory }

    public struct File: Sendable, Equatable, Encodable {
        public var name: String
        /// Size on disk (header + data).
        public var bytes: Int
        public var tensorCount: Int
    }

    public struct Tensor: Sendable, Equatable, Encodable {
        public var name: String
        public var dtype: DType
        public var shape: [Int]
        public var bytes: Int
        /// Model parameters this tensor holds: its element count, or for an MLX-quantized
        /// `.weight` the unpacked count (elements × 32 / bits). Zero for the `.scales` and
        /// `.biases` of a quantized layer, which are storage overhead, not parameters.
        public var parameters: Int
        /// Basename of the file holding the tensor.
        public var file: String
        /// Bits per value when the tensor is MLX-quantized packed weights.
        @ExplicitNull public var quantizedBits: Int?
    }

    public struct Quantization: Sendable, Equatable, Encodable {
        /// Default bits/group size (config.json's, else inferred from the tensor shapes).
        @ExplicitNull public var bits: Int?
        @ExplicitNull public var groupSize: Int?
        @ExplicitNull public var mode: String?
        /// Where it was found: config.json's `quantization`, packed tensors with `.scales`
        /// siblings, or both.
        public var source: String
        /// How many packed `.weight` tensors there are.
        public var quantizedTensors: Int
    }

    public struct ConfigSummary: Sendable, Equatable, Encodable {
        public var modelType: String
        public var hiddenSize: Int
        public var intermediateSize: Int
        public var layers: Int
        public var attentionHeads: Int
        public var kvHeads: Int
        public var headDim: Int
        public var vocabSize: Int
        public var maxPositionEmbeddings: Int
        /// `rope_scaling.type` (`longrope`, `su`, `linear`), nil without scaling.
        @ExplicitNull public var ropeScaling: String?
        public var partialRotaryFactor: Double
        public var tieWordEmbeddings: Bool
        @ExplicitNull public var torchDType: DType?
    }

    public var schemaVersion = 1
    /// The path as the user gave it.
    public var path: String
    public var kind: Kind
    public var files: [File]
    /// Sorted by name.
    public var tensors: [Tensor]
    public var parameterCount: Int
    /// Sum of the tensors' data bytes (what an index's `metadata.total_size` says).
    public var tensorBytes: Int
    /// Data bytes per dtype, e.g. `["U32": …, "BF16": …]` for a 4-bit model.
    public var dtypeBytes: [String: Int]
    @ExplicitNull public var quantization: Quantization?
    @ExplicitNull public var config: ConfigSummary?
    /// The files' safetensors `__metadata__`, merged (first file wins on a conflict).
    public var metadata: [String: String]
    /// Things worth telling the user that do not stop the inspection.
    public var warnings: [String]
    /// `--ctx N`: weights plus the KV cache of N positions (absent without --ctx).
    public var memory: MemoryAtContext? = nil

    public var tensorCount: Int { tensors.count }

    /// Dtypes by descending share of the bytes: `[.bf16]`, `[.u32, .bf16]`.
    public var dominantDTypes: [DType] {
        dtypeBytes.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.compactMap {
            DType(rawValue: $0.key)
        }
    }

    enum CodingKeys: String, CodingKey {
        case schemaVersion = "schema_version"
        case path, kind, files, tensors
        case tensorCount = "tensor_count"
        case parameterCount = "parameter_count"
        case tensorBytes = "tensor_bytes"
        case dtypeBytes = "dtype_bytes"
        case quantization, config
        case metadata, warnings, memory
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(schemaVersion, forKey: .schemaVersion)
        try c.encode(path, forKey: .path)
        try c.encode(kind, forKey: .kind)
        try c.encode(files, forKey: .files)
        try c.encode(tensors, forKey: .tensors)
        try c.encode(tensorCount, forKey: .tensorCount)
        try c.encode(parameterCount, forKey: .parameterCount)
        try c.encode(tensorBytes, forKey: .tensorBytes)
        try c.encode(dtypeBytes, forKey: .dtypeBytes)
        try c.encode(quantization, forKey: .quantization)  // explicit null when absent
        try c.encode(config, forKey: .config)
        try c.encode(metadata, forKey: .metadata)
        try c.encode(warnings, forKey: .warnings)
        try c.encodeIfPresent(memory, forKey: .memory)
    }
}

extension InspectReport.File {
    enum CodingKeys: String, CodingKey {
        case name, bytes
        case tensorCount = "tensor_count"
    }
}

extension InspectReport.Tensor {
    enum CodingKeys: String, CodingKey {
        case name, dtype, shape, bytes, parameters, file
        case quantizedBits = "quantized_bits"
    }
}

extension InspectReport.Quantization {
    enum CodingKeys: String, CodingKey {
        case bits
        case groupSize = "group_size"
        case mode, source
        case quantizedTensors = "quantized_tensors"
    }
}

extension InspectReport.ConfigSummary {
    enum CodingKeys: String, CodingKey {
        case modelType = "model_type"
        case hiddenSize = "hidden_size"
        case intermediateSize = "intermediate_size"
        case layers
        case attentionHeads = "attention_heads"
        case kvHeads = "kv_heads"
        case headDim = "head_dim"
        case vocabSize = "vocab_size"
        case maxPositionEmbeddings = "max_position_embeddings"
        case ropeScaling = "rope_scaling"
        case partialRotaryFactor = "partial_rotary_factor"
        case tieWordEmbeddings = "tie_word_embeddings"
        case torchDType = "torch_dtype"
    }
}

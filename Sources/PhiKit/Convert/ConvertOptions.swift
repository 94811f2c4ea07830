import Foundation
import PhiFormats

/// What `phikit convert` was asked to do; mirrors `mlx_lm.convert`'s parameters.
public struct ConvertOptions: Sendable, CancellableOptions {
    /// A model directory, a Hub id (`org/name[@rev]`) already in the HF cache, or a registry
    /// alias. Never downloads.
    public var source: String
    /// Output directory; nil = the phikit model store (`ModelStore.modelsDirectory`).
    public var output: String?
    /// `-q`: MLX quantization of every Linear/Embedding whose last dim divides the group.
    public var quantize = false
    /// nil: the mode's own (affine 4-bit g64, mxfp4 g32, nvfp4 g16, mxfp8 8-bit g32).
    public var bits: Int? = nil
    public var groupSize: Int? = nil
    /// `--q-mode`: affine, mxfp4, nvfp4 or mxfp8.
    public var mode: String = "affine"
    /// `--quant-predicate`: a mixed-bit affine recipe (per-layer bits in config.json).
    public var quantPredicate: MixedQuantRecipe? = nil
    /// `--dtype`: cast every float tensor first. nil = config.json's `torch_dtype` (only that
    /// key, as mlx_lm: a transformers-5 `dtype` key does not cast), else keep each tensor's own.
    public var dtype: DType? = nil
    /// `--dequantize`: turn an MLX-quantized model back into a float one.
    public var dequantize = false
    /// Greedy shard limit in bytes of tensor data (mlx_lm: `5 << 30`).
    public var maxShardSize = 5 << 30
    /// Replace an existing output (only once the new one is complete).
    public var force = false
    /// GGUF source: refuse tensors that cannot be brought over exactly.
    public var exact = false
    /// Threads for the quantizer (default: every core).
    public var threads = ProcessInfo.processInfo.activeProcessorCount
    /// Where `PHIKIT_HOME`, `HF_HUB_CACHE`, … are read from (tests pass their own).
    public var environment: [String: String]
    /// Stops the convert between tensors (Ctrl-C); its temporary output is removed. A pull of
    /// a missing Hub source stops with it.
    public var cancellation: CancellationToken? = nil
    /// Streaming granularity (values per chunk, per quantization block). Tests shrink them
    /// to drive many chunks through tiny models; the result never depends on them.
    var chunkElements = 4 << 20
    /// Without `dtype`, cast to config.json's `torch_dtype` as mlx_lm.convert does; fuse
    /// (mlx_lm.fuse loads and saves without a cast) turns it off.
    var castsToConfigDType = true
    var blockElements = 128 << 10

    /// The knobs keep their defaults (no quantization, mlx_lm's shard size, every core);
    /// set the ones a caller wants on the value.
    public init(
        source: String, output: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.source = source
        self.output = output
        self.environment = environment
    }
}

extension ConvertOptions {
    /// The scheme of every quantized layer a recipe does not override.
    func quantizationScheme() throws(QuantizationError) -> QuantizationScheme {
        try QuantizationScheme(mode: mode, bits: bits, groupSize: groupSize)
    }
}

/// Reported after each tensor is written (and once before the first), for a progress line.
public struct ConvertProgress: Sendable {
    public var tensorsDone: Int
    public var tensorCount: Int
    /// Source bytes consumed so far / in total.
    public var bytesRead: Int
    public var bytesToRead: Int
    public var bytesWritten: Int
    public var elapsed: Double
    /// The tensor just finished (nil before the first).
    public var tensor: String?

    /// Seconds left at the current rate, once there is a rate to speak of.
    public var eta: Double? {
        guard bytesRead > 0, elapsed > 0.5, bytesToRead > bytesRead else { return nil }
        return elapsed * Double(bytesToRead - bytesRead) / Double(bytesRead)
    }
}

/// What a finished convert produced.
public struct ConvertSummary: Sendable, Encodable {
    public var source: String
    /// The resolved source directory (a snapshot directory for Hub ids).
    public var sourceDirectory: String
    public var outputDirectory: String
    /// Output files, sorted.
    public var files: [String]
    public var tensorCount: Int
    public var quantizedTensorCount: Int
    /// `quantization` as written to config.json, nil if the output is not quantized.
    public var bits: Int?
    public var groupSize: Int?
    /// Bits per weight exactly as mlx_lm computes it (see `ConvertPlan.bitsPerWeight`).
    public var bitsPerWeight: Double
    /// mlx_lm's `{bpw:.3f}`.
    public var bitsPerWeightText: String
    public var totalParameters: Int
    /// Tensor data bytes (the index's `total_size`).
    public var tensorBytes: Int
    /// Every byte written into the output directory.
    public var bytesWritten: Int
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case source
        case sourceDirectory = "source_directory"
        case outputDirectory = "output_directory"
        case files
        case tensorCount = "tensor_count"
        case quantizedTensorCount = "quantized_tensor_count"
        case bits
        case groupSize = "group_size"
        case bitsPerWeight = "bits_per_weight"
        case totalParameters = "total_parameters"
        case tensorBytes = "tensor_bytes"
        case bytesWritten = "bytes_written"
        case seconds
    }
}

import Foundation
import PhiFormats

/// What `phikit fuse` was asked to do; mirrors `mlx_lm.fuse`'s parameters.
public struct FuseOptions: Sendable {
    /// The base model: a directory, a Hub id in the cache or a registry alias.
    public var model: String
    /// The folder `mlx_lm.lora` wrote: adapters.safetensors and adapter_config.json.
    public var adapterPath: String
    /// nil: `<store>/models/<model>-fused`.
    public var output: String?
    /// `--de-quantize`: write a float model (the fused layers are then not packed again).
    public var dequantize = false
    public var force = false
    public var threads = ProcessInfo.processInfo.activeProcessorCount
    public var environment: [String: String]
    /// Stops the fuse between chunks (Ctrl-C); nothing half-written stays, as with convert.
    public var cancellation: CancellationToken? = nil
    /// Streaming granularity (values per chunk); tests shrink it, the bytes never depend on it.
    var chunkElements = 4 << 20

    public init(
        model: String, adapterPath: String, output: String? = nil,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.model = model
        self.adapterPath = adapterPath
        self.output = output
        self.environment = environment
    }
}

/// `phikit fuse`: a base model plus an mlx-lm LoRA/DoRA adapter → the fused MLX model, byte
/// for byte what `mlx_lm.fuse` writes (tensors, config.json, index, README), streamed as
/// convert streams (memory: a chunk of rows plus the adapter).
///
/// mlx_lm.fuse loads the base without a cast, replaces each wrapped Linear by its `fuse()`
/// (a quantized one dequantized, fused and quantized again with its own mode, bits and group
/// size, unless `--dequantize`), dequantizes every other packed layer with `--dequantize`
/// (popping `quantization` from config.json), and saves as convert does. Every other tensor
/// is copied as it is. The adapter is checked before anything is written (`LoRAAdapter`).
public func fuse(
    _ options: FuseOptions, progress: (ConvertProgress) -> Void = { _ in }
) throws -> FuseSummary {
    let source = try ModelLocator.locate(options.model, environment: options.environment)
    let clock = ContinuousClock.now
    func elapsed() -> Double {
        let d = ContinuousClock.now - clock
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
    var convertOptions = ConvertOptions(
        source: source.directory, output: options.output, environment: options.environment)
    convertOptions.dequantize = options.dequantize
    convertOptions.force = options.force
    convertOptions.threads = options.threads
    convertOptions.castsToConfigDType = false
    convertOptions.chunkElements = options.chunkElements
    convertOptions.cancellation = options.cancellation
    let adapterPath = options.adapterPath
    var fineTuneType = ""
    let rewrite: (inout [ConvertStep], ModelLayout) throws -> Void = { steps, layout in
        let adapter = try LoRAAdapter.load(directory: adapterPath, layout: layout)
        fineTuneType = adapter.config.kind.rawValue
        try FuseSteps.rewrite(&steps, layout: layout, adapter: adapter)
    }
    let plan: ConvertPlan
    do {
        plan = try ConvertPlan.make(
            sourceDirectory: source.directory, options: convertOptions, rewrite: rewrite)
    } catch ConvertError.notQuantized {
        // mlx_lm.fuse --dequantize of a float base: nothing to dequantize, not an error.
        convertOptions.dequantize = false
        plan = try ConvertPlan.make(
            sourceDirectory: source.directory, options: convertOptions, rewrite: rewrite)
    }
    let output =
        options.output.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        ?? ModelStore.modelsDirectory(environment: options.environment) + "/" + source.name
            + "-fused"
    try OutputGuard.check(output: output, source: source, force: options.force)
    try writePlannedModel(
        plan, source: source, output: output, options: convertOptions, progress: progress,
        elapsed: elapsed)
    let (files, written) = outputListing(output)
    let packed = plan.outputTensors.filter { $0.name.hasSuffix(".scales") }.count
    // The base's own quantization, kept (fuse never quantizes anew).
    let quantization = packed > 0 ? try ModelConfig.load(directory: output).quantization : nil
    let model = ConvertSummary(
        source: options.model, sourceDirectory: source.directory, outputDirectory: output,
        files: files, tensorCount: plan.outputTensors.count, quantizedTensorCount: packed,
        bits: quantization?.bits, groupSize: quantization?.groupSize,
        bitsPerWeight: plan.bitsPerWeight,
        bitsPerWeightText: String(format: "%.3f", plan.bitsPerWeight),
        totalParameters: plan.totalParameters, tensorBytes: plan.totalSize, bytesWritten: written,
        seconds: elapsed())
    return FuseSummary(
        adapterPath: options.adapterPath, fineTuneType: fineTuneType,
        adaptedLayers: plan.steps.filter { $0.kind == .fuse }.count, model: model)
}

/// What a finished fuse produced: the adapter's layers baked in, and the model written.
public struct FuseSummary: Sendable, Encodable {
    public var adapterPath: String
    /// lora or dora.
    public var fineTuneType: String
    public var adaptedLayers: Int
    public var model: ConvertSummary

    enum CodingKeys: String, CodingKey {
        case model
        case adapterPath = "adapter_path"
        case fineTuneType = "fine_tune_type"
        case adaptedLayers = "adapted_layers"
    }
}

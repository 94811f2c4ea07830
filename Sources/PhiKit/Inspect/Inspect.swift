import Foundation
import PhiFormats

/// `inspect` could not start: the path is not there.
public enum InspectError: UserFacingError, Equatable {
    case notFound(path: String)

    public var message: String {
        switch self {
        case .notFound(let path): "\(path): no such file or directory"
        }
    }

    public var hint: String? { "give a .safetensors or .gguf file, a model directory or name" }
    public var exitCode: ExitCode { .noInput }
}

/// What `inspect MODEL` looks at: a file or directory that exists, else MODEL found as every
/// command finds it (`ModelLocator`: converted-model store, registry alias, Hub id in the
/// cache).
public func inspectPath(
    model: String, environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> String {
    if FileManager.default.fileExists(atPath: model) { return model }
    let looksLikePath =
        ["/", "./", "../", "~"].contains { model.hasPrefix($0) }
        || [".safetensors", ".gguf"].contains { model.lowercased().hasSuffix($0) }
    if looksLikePath { throw InspectError.notFound(path: model) }
    return try ModelLocator.locate(model, environment: environment).directory
}

/// Reads the tensors of a `.safetensors` file or a model directory (its weights as
/// `ModelWeights` chooses them, plus config.json) and summarises them. Reads headers and JSON
/// only; tensor data is never touched, so a 7 GB model inspects instantly.
///
/// Errors are the readers': a corrupt file is `SafeTensorsError` (65), a missing path
/// `InspectError.notFound` (66), a broken config.json in a directory `ConfigError` (65).
public func inspect(path: String) throws -> InspectReport {
    var isDirectory: ObjCBool = false
    guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
        throw InspectError.notFound(path: path)
    }
    var warnings: [String] = []
    let files: [SafeTensorsFile]
    let config: ModelConfig?
    if isDirectory.boolValue {
        let weights = try ModelWeights(directory: path)
        files = weights.files
        config = try loadConfig(directory: path, warnings: &warnings)
        if let config { warnings += tensorSetWarnings(weights, config: config) }
    } else {
        files = [try SafeTensorsFile(path: path)]
        // A lone shard: its directory's config.json (if any) still says how it is quantized,
        // but a problem with that config must not stop us showing the file.
        let directory = (path as NSString).deletingLastPathComponent
        do {
            config = try loadConfig(
                directory: directory.isEmpty ? "." : directory, warnings: &warnings)
        } catch let error as any UserFacingError {
            warnings.append("ignoring config.json: \(error.message)")
            config = nil
        }
    }
    return InspectReportBuilder(
        path: path, isDirectory: isDirectory.boolValue, files: files,
        config: config, warnings: warnings
    ).build()
}

/// config.json if present, decoded without the engine's strict validation: inspect shows
/// what is there, `verify` judges it.
private func loadConfig(directory: String, warnings: inout [String]) throws -> ModelConfig? {
    let path = (directory as NSString).appendingPathComponent("config.json")
    var exists = stat()
    guard lstat(path, &exists) == 0 else {
        warnings.append("no config.json in \(directory); showing tensors only")
        return nil
    }
    let data = try readMetadataFile(path)
    let config = try ModelConfig(data: [UInt8](data), source: path, validating: false)
    do { try config.validate() } catch {
        warnings.append("config.json is not valid: \(error.message)")
    }
    return config
}

/// The tensor set judged by the architecture's schema, in the words run, verify and convert
/// use: what they would refuse (missing, foreign) and what they ignore. Nothing for a config
/// that is not valid (its sizes cannot be trusted to lay out the tensors).
private func tensorSetWarnings(_ weights: ModelWeights, config: ModelConfig) -> [String] {
    guard (try? config.validate()) != nil, let layout = try? ModelLayout(config: config) else {
        return []
    }
    let check = layout.check(tensorNames: weights.tensorNames)
    return check.ignored.map { "tensor '\($0.name)' \($0.reason.reason)" }
        + check.errors(directory: weights.directory) { weights.tensor($0)?.file.path }
        .map(\.message)
}

/// Turns opened files + config into the report: per-tensor parameter counts, quantization
/// detection, totals.
struct InspectReportBuilder {
    var path: String
    var isDirectory: Bool
    var files: [SafeTensorsFile]
    var config: ModelConfig?
    var warnings: [String]

    func build() -> InspectReport {
        var infos: [String: (info: TensorInfo, file: String)] = [:]
        var fileRows: [InspectReport.File] = []
        var metadata: [String: String] = [:]
        for file in files {
            let name = (file.path as NSString).lastPathComponent
            for info in file.tensors { infos[info.name] = (info, name) }
            fileRows.append(
                .init(name: name, bytes: file.fileSize, tensorCount: file.tensors.count))
            for (key, value) in file.metadata ?? [:] where metadata[key] == nil {
                metadata[key] = value
            }
        }

        var warnings = self.warnings
        var tensors: [InspectReport.Tensor] = []
        var inferredBits: Set<Int> = []
        var packedCount = 0
        for name in infos.keys.sorted() {
            let (info, file) = infos[name]!
            let count = PackedTensorCount(info, quantization: config?.quantization) {
                infos[$0]?.info
            }
            if let bits = count.bits {
                packedCount += 1
                if count.bitsInferred { inferredBits.insert(bits) }
            }
            tensors.append(
                InspectReport.Tensor(
                    name: name, dtype: info.dtype, shape: info.shape, bytes: info.byteCount,
                    parameters: count.parameters, file: file, quantizedBits: count.bits))
        }

        let quantization = quantizationSummary(packedCount: packedCount, inferredBits: inferredBits)
        if config?.quantization == nil && packedCount > 0 {
            let bits = inferredBits.sorted().map(String.init).joined(separator: "/")
            warnings.append(
                "config.json does not describe the quantization; assumed group size "
                    + "\(PackedTensorCount.defaultGroupSize), which gives \(bits) bits")
        }
        if let q = config?.quantization, packedCount == 0 {
            warnings.append(
                "config.json says \(q.bits)-bit quantization, but no tensor is quantized")
        }
        var dtypeBytes: [String: Int] = [:]
        for t in tensors { dtypeBytes[t.dtype.rawValue, default: 0] += t.bytes }

        return InspectReport(
            path: path, kind: isDirectory ? .directory : .file, files: fileRows, tensors: tensors,
            parameterCount: tensors.reduce(0) { $0 + $1.parameters },
            tensorBytes: tensors.reduce(0) { $0 + $1.bytes }, dtypeBytes: dtypeBytes,
            quantization: quantization, config: config.map(Self.summary), metadata: metadata,
            warnings: warnings)
    }

    private func quantizationSummary(
        packedCount: Int, inferredBits: Set<Int>
    ) -> InspectReport
        .Quantization?
    {
        let q = config?.quantization
        guard q != nil || packedCount > 0 else { return nil }
        let source =
            switch (q != nil, packedCount > 0) {
            case (true, true): "config+tensors"
            case (true, false): "config"
            default: "tensors"
            }
        return .init(
            bits: q?.bits ?? (inferredBits.count == 1 ? inferredBits.first : nil),
            groupSize: q?.groupSize ?? PackedTensorCount.defaultGroupSize,
            mode: q?.mode ?? "affine",
            source: source, quantizedTensors: packedCount)
    }

    static func summary(_ c: ModelConfig) -> InspectReport.ConfigSummary {
        .init(
            modelType: c.modelType, hiddenSize: c.hiddenSize, intermediateSize: c.intermediateSize,
            layers: c.layerCount, attentionHeads: c.attentionHeads, kvHeads: c.kvHeads,
            headDim: c.headDim,
            vocabSize: c.vocabSize, maxPositionEmbeddings: c.maxPositionEmbeddings,
            ropeScaling: c.ropeScaling?.type, partialRotaryFactor: c.partialRotaryFactor,
            tieWordEmbeddings: c.tieWordEmbeddings, torchDType: c.torchDType)
    }
}

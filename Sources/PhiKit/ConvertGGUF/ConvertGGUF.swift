import Foundation
import PhiFormats

/// What a GGUF conversion did to each tensor that did not come over exactly.
public struct GGUFInexactTensor: Sendable, Encodable {
    /// The GGUF tensor (`blk.3.ffn_down.weight`).
    public var tensor: String
    public var type: String
    /// What it became: `affine 8-bit g32`, `float16`, …
    public var became: String
    /// Largest |converted − ggml's own float32 value|.
    public var maxAbsError: Double

    enum CodingKeys: String, CodingKey {
        case tensor, type, became
        case maxAbsError = "max_abs_error"
    }
}

public struct GGUFConvertSummary: Sendable, Encodable {
    public var source: String
    public var outputDirectory: String
    /// The GGUF's `general.architecture` (phi3, llama, phi2).
    public var architecture: String
    /// config.json's `model_type` of the output (phi3, llama, phi).
    public var modelType: String
    public var files: [String]
    public var tensorCount: Int
    /// GGUF tensors (by type) whose values the output reproduces exactly.
    public var exactTypes: [String: Int]
    public var inexact: [GGUFInexactTensor]
    public var bytesWritten: Int
    public var seconds: Double

    enum CodingKeys: String, CodingKey {
        case source
        case outputDirectory = "output_directory"
        case architecture
        case modelType = "model_type"
        case files
        case tensorCount = "tensor_count"
        case exactTypes = "exact_types"
        case inexact
        case bytesWritten = "bytes_written"
        case seconds
    }
}

/// `phikit convert FILE.gguf`: a llama.cpp model file → an MLX model directory (phi3, llama or
/// phi, as the file's architecture)
/// without a second rounding where MLX has the GGUF block's exact form (see `GGUFBlocks`),
/// re-quantized to 8 bits (or float with `--dtype`) where it has none, with every such tensor
/// and its error in the summary. Everything is checked and planned before the output exists;
/// the output is built beside its destination and renamed into place when complete.
public func convertGGUF(
    _ options: ConvertOptions, progress: (ConvertProgress) -> Void = { _ in }
) throws -> GGUFConvertSummary {
    let clock = ContinuousClock.now
    func elapsed() -> Double {
        let d = ContinuousClock.now - clock
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
    if options.quantize {
        throw ConvertError.badOption(
            "-q does not apply to a GGUF source: its tensors keep their own quantization",
            hint: "use --dequantize or --dtype to get float weights")
    }
    let file: GGUFFile
    do { file = try GGUFFile(path: options.source) } catch {
        if case .io(let e) = error, e.errno == ENOENT {
            throw InspectError.notFound(path: options.source)
        }
        throw error
    }
    let h = GGUFHyperparameters(file)
    let shape = try GGUFShape(file, h)
    let layout = try GGUFModelLayout.make(file, shape)
    let settings = GGUFConvertSettings(
        dtype: options.dtype, dequantize: options.dequantize, exact: options.exact)
    let plans = try layout.modules.map {
        try GGUFModulePlan.make($0, file: file, settings: settings)
    }
    let tokenizer = try GGUFTokenizer(file, contextLength: shape.contextLength)
    let floatType: DType =
        plans.lazy.compactMap { if case .float(let d) = $0.form, $0.module.isMatrix { d } else { nil } }
        .first ?? .f16
    let config = try GGUFConfig.json(
        file, shape, h, layout, tokenizer: tokenizer, quantization: quantizationJSON(plans),
        floatType: floatType)

    let output = try ggufOutputDirectory(options, file: file)
    let specs = plans.flatMap(\.outputs)
    let shards = ConvertPlan.makeShards(specs, maxBytes: options.maxShardSize)
    var inexact: [GGUFInexactTensor] = []
    var temp: String?
    do {
        try Cancellation.cancellable {
            let dir = try makeTemporaryDirectory(beside: output)
            temp = dir
            let total = specs.count
            let toRead = layout.modules.reduce(0) { $0 + $1.parts.reduce(0) { $0 + $1.byteCount } }
            var read = 0
            var written = 0
            var done = 0
            // A module's outputs (weight, scales, biases) may straddle two shards: the next
            // shard opens when the current one has all its tensors.
            var remaining = shards[...]
            var writer: SafeTensorsWriter?
            var pending: ArraySlice<TensorSpec> = []
            /// Makes output `spec` the one the writer takes next.
            func begin(_ spec: TensorSpec) throws {
                while pending.isEmpty, let shard = remaining.popFirst() {
                    try writer?.finish()
                    writer = try SafeTensorsWriter(
                        path: dir + "/" + shard.file, tensors: shard.tensors,
                        metadata: ["format": "mlx"])
                    pending = shard.tensors[...]
                }
                precondition(pending.first == spec, "GGUF convert: shard order")
                pending.removeFirst()
            }
            let transcoder = GGUFTranscoder(file: file)
            for plan in plans {
                try Cancellation.check()
                var begun = 0  // outputs of this plan handed to the writer so far
                let errors = try transcoder.stream(plan) { index, bytes in
                    while begun <= index {
                        try begin(plan.outputs[begun])
                        begun += 1
                    }
                    try writer?.write(bytes)
                    written += bytes.count
                }
                for spec in plan.outputs[begun...] { try begin(spec) }  // empty tensors
                for t in plan.inexact {
                    // A fused tensor split into several outputs (phi2's attn_qkv) is one entry.
                    if let i = inexact.firstIndex(where: { $0.tensor == t.name }) {
                        inexact[i].maxAbsError = max(inexact[i].maxAbsError, errors[t.name] ?? 0)
                        continue
                    }
                    inexact.append(
                        GGUFInexactTensor(
                            tensor: t.name, type: t.type.name, became: describe(plan.form),
                            maxAbsError: errors[t.name] ?? 0))
                }
                for part in plan.module.parts {
                    read += part.byteCount
                    file.release(part.tensor)
                }
                done += plan.outputs.count
                progress(
                    ConvertProgress(
                        tensorsDone: done, tensorCount: total, bytesRead: read,
                        bytesToRead: toRead, bytesWritten: written, elapsed: elapsed(),
                        tensor: plan.module.name))
            }
            try writer?.finish()
            try writeGGUFMetadata(
                into: dir, shards: shards, config: config, tokenizer: tokenizer, source: options.source)
            try install(dir, at: output)
        }
    } catch {
        if let temp { try? FileManager.default.removeItem(atPath: temp) }
        throw error
    }
    let (files, bytes) = outputListing(output)
    var exactTypes: [String: Int] = [:]
    let inexactNames = Set(inexact.map(\.tensor))
    for t in file.tensors where !inexactNames.contains(t.name) {
        exactTypes[t.type.name, default: 0] += 1
    }
    return GGUFConvertSummary(
        source: options.source, outputDirectory: output, architecture: shape.architecture,
        modelType: config["model_type"]?.stringValue ?? "", files: files, tensorCount: specs.count, exactTypes: exactTypes, inexact: inexact,
        bytesWritten: bytes, seconds: elapsed())
}

private func describe(_ form: GGUFModulePlan.Form) -> String {
    switch form {
    case .float(let d): d.pythonName
    case .affine(let bits, let scales): "affine \(bits)-bit g32 (\(scales.pythonName) scales)"
    case .mxfp4: "mxfp4"
    }
}

/// config.json's `quantization`: the most common bits as the default, other bits per module,
/// group size 32 throughout. nil when nothing is quantized.
private func quantizationJSON(_ plans: [GGUFModulePlan]) -> JSONValue? {
    var bitsOf: [(String, Int)] = []
    var mxfp4: [String] = []
    for p in plans {
        let module = String(p.module.name.dropLast(".weight".count))
        if case .affine(let bits, _) = p.form { bitsOf.append((module, bits)) }
        if p.form == .mxfp4 { mxfp4.append(module) }
    }
    if bitsOf.isEmpty, !mxfp4.isEmpty {
        return .object([("group_size", .int(32)), ("bits", .int(4)), ("mode", .string("mxfp4"))])
    }
    guard !bitsOf.isEmpty else { return nil }
    var counts: [Int: Int] = [:]
    for (_, b) in bitsOf { counts[b, default: 0] += 1 }
    let main = counts.max { ($0.value, -$0.key) < ($1.value, -$1.key) }!.key
    var entries: [(key: String, value: JSONValue)] = [
        ("group_size", .int(32)), ("bits", .int(main)), ("mode", .string("affine")),
    ]
    for (module, bits) in bitsOf where bits != main {
        entries.append(
            (module, .object([("group_size", .int(32)), ("bits", .int(bits)), ("mode", .string("affine"))])))
    }
    for module in mxfp4 {
        entries.append(
            (module, .object([("group_size", .int(32)), ("bits", .int(4)), ("mode", .string("mxfp4"))])))
    }
    return .object(entries)
}

/// `-o`, else `<store>/models/<file name without .gguf>`.
private func ggufOutputDirectory(_ o: ConvertOptions, file: GGUFFile) throws -> String {
    let path: String
    if let output = o.output {
        path = URL(fileURLWithPath: output).standardizedFileURL.path
    } else {
        let base = ((file.path as NSString).lastPathComponent as NSString).deletingPathExtension
        path = ModelStore.modelsDirectory(environment: o.environment) + "/" + base
    }
    if FileManager.default.fileExists(atPath: path) && !o.force {
        throw ConvertError.outputExists(path: path)
    }
    return path
}

private func writeGGUFMetadata(
    into dir: String, shards: [(file: String, tensors: [TensorSpec])], config: JSONValue,
    tokenizer: GGUFTokenizer, source: String
) throws {
    var files: [(String, [UInt8])] = [
        ("config.json", Array(config.pythonJSONDump(indent: 4).utf8)),
        ("tokenizer.json", Array(tokenizer.tokenizerJSON.pythonJSONDump(indent: 2).utf8)),
        ("tokenizer_config.json", Array(tokenizer.configJSON.pythonJSONDump(indent: 2).utf8)),
    ]
    var generation: [(key: String, value: JSONValue)] = []
    if let bos = tokenizer.bosID { generation.append(("bos_token_id", .int(bos))) }
    let eos = tokenizer.eosIDs
    if !eos.isEmpty {
        generation.append(("eos_token_id", eos.count == 1 ? .int(eos[0]) : .array(eos.map { .int($0) })))
    }
    files.append(("generation_config.json", Array(JSONValue.object(generation).pythonJSONDump(indent: 2).utf8)))
    if shards.count > 1 {
        var weightMap: [String: String] = [:]
        var total = 0
        for shard in shards {
            for t in shard.tensors {
                weightMap[t.name] = shard.file
                total += t.byteCount
            }
        }
        files.append((ShardIndex.fileName, ShardIndex(weightMap: weightMap, totalSize: total).jsonData()))
    }
    files.append(
        ("README.md", Array("Converted by phikit from \((source as NSString).lastPathComponent) (GGUF).\n".utf8)))
    for (name, bytes) in files {
        do { try AtomicFile.write(bytes, to: dir + "/" + name) } catch {
            throw ConvertError.io(path: dir + "/" + name, detail: error.message)
        }
    }
}

import Foundation
import PhiFormats
import PhiKit

/// `phikit inspect MODEL [--json]`: what is in a .safetensors file, a model (a directory, an
/// alias, a Hub id in the cache) or a GGUF file (see InspectGGUF.swift).
struct InspectCommand: Command {
    static let name = "inspect"
    static let summary = "Show a model's tensors, parameter count, size, quantization and config"
    static let usage = "phikit inspect <model> [--ctx <n>] [--json]"
    static let help = """
        Lists the tensors of a .safetensors file, a .gguf file or a model directory (name, dtype, shape,
        parameters, size; sorted by name), then the config.json summary, the quantization and
        a total line. Reads only headers and JSON, so it is instant on any model size.
        Parameters of MLX-quantized weights are counted unpacked (elements × 32 / bits); their
        .scales and .biases are not parameters.

        arguments:
          <model>   a .safetensors file, a model directory (config.json + safetensors), a
                    registry alias or Hub id in the cache (as run takes it), or a GGUF file
                    (llama.cpp / ollama): its model metadata (architecture, context, heads,
                    rope, tokenizer, chat template), every metadata key, and the tensors with
                    their GGML types (Q4_K, Q6_K, F32, …) in file order

        options:
          --ctx <n> also the memory the model needs at n tokens: the weights plus the KV
                    cache of n positions at 16 bits (run's default), 32 and 8 bits
          --json    print the report as one JSON object (keys: schema_version, path, kind,
                    files, tensors, tensor_count, parameter_count, tensor_bytes, dtype_bytes,
                    quantization, config, metadata, warnings; see InspectReport.swift)

        exit codes: 65 corrupt safetensors, GGUF or config.json, 66 model or path not found
        """

    var path: String
    var json: Bool
    var context: Int?

    init(_ args: inout ArgumentReader) throws {
        json = args.flag("--json")
        context = try args.option("--ctx", as: Int.self)
        if let context, context < 1 { throw UsageError("--ctx must be at least 1") }
        path = try args.positional("model")
        try args.finish()
    }

    func run() throws {
        let path = try PhiKit.inspectPath(model: path)
        if isGGUF(path: path) { return try runGGUF() }
        var report = try PhiKit.inspect(path: path)
        if let context {
            guard let memory = MemoryAtContext(report, context: context) else {
                throw UsageError(
                    "--ctx needs the model's config.json (layers and heads size the KV cache)",
                    hint: "inspect the model directory rather than one weight file")
            }
            report.memory = memory
        }
        if json {
            try StandardOutput.print(try Format.json(report))
        } else {
            try StandardOutput.print(Self.render(report))
            for warning in report.warnings { Diagnostics.warning(warning) }
        }
    }

    /// The human form: tensor table, config and quantization lines, and a one-line total.
    static func render(_ r: InspectReport) -> String {
        // The QUANT column only when something is quantized.
        let quantized = r.tensors.contains { $0.quantizedBits != nil }
        let rows = r.tensors.map { t in
            [
                t.name, t.dtype.rawValue,
                "[" + t.shape.map(String.init).joined(separator: ", ") + "]",
            ]
                + (quantized ? [t.quantizedBits.map { "\($0)-bit" } ?? ""] : [])
                + [Format.grouped(t.parameters), Format.bytes(t.bytes)]
        }
        let header =
            ["NAME", "DTYPE", "SHAPE"] + (quantized ? ["QUANT"] : []) + ["PARAMETERS", "SIZE"]
        var lines = [
            Format.table(
                header: header, rows: rows, rightAligned: [header.count - 2, header.count - 1]),
            "",
        ]
        let fileBytes = r.files.reduce(0) { $0 + $1.bytes }
        let fileWord = r.files.count == 1 ? "file" : "files"
        lines.append(
            "files:        \(r.files.count) safetensors \(fileWord), \(Format.bytes(fileBytes)) on disk"
        )
        if let c = r.config {
            lines.append(
                "config:       \(c.modelType), hidden \(c.hiddenSize), intermediate \(c.intermediateSize), "
                    + "\(c.layers) \(c.layers == 1 ? "layer" : "layers"), \(c.attentionHeads) heads, \(c.kvHeads) kv heads, "
                    + "head dim \(c.headDim), vocab \(c.vocabSize)")
            lines.append(
                "              rope \(c.ropeScaling ?? "default"), "
                    + "partial rotary \(c.partialRotaryFactor), context \(c.maxPositionEmbeddings), "
                    + (c.tieWordEmbeddings ? "tied" : "untied") + " embeddings"
                    + (c.torchDType.map { ", \($0.pythonName)" } ?? ""))
        }
        lines.append("quantization: " + (r.quantization.map(describe) ?? "none"))
        lines.append(summaryLine(r))
        if let m = r.memory {
            let caches = m.caches.map { c in
                "\(Format.bytes(c.totalBytes)) with a \(c.bits)-bit KV cache ("
                    + "\(Format.bytes(c.kvCacheBytes)))"
            }
            lines.append(
                "memory at \(Format.grouped(m.context)) tokens: weights \(Format.bytes(m.weightBytes)) + KV: "
                    + caches.joined(separator: "; "))
        }
        return lines.joined(separator: "\n")
    }

    /// `195 tensors, 3,821,079,552 parameters, 7.64 GB, bf16`.
    static func summaryLine(_ r: InspectReport) -> String {
        var parts = [
            "\(Format.grouped(r.tensorCount)) \(r.tensorCount == 1 ? "tensor" : "tensors")",
            "\(Format.grouped(r.parameterCount)) parameters",
            Format.bytes(r.tensorBytes),
        ]
        let dtypes = r.dominantDTypes.map { $0.rawValue.lowercased() }.joined(separator: "+")
        if !dtypes.isEmpty { parts.append(dtypes) }
        if let q = r.quantization, let bits = q.bits {
            parts.append("\(bits)-bit")
        }
        return parts.joined(separator: ", ")
    }

    private static func describe(_ q: InspectReport.Quantization) -> String {
        let bits = q.bits.map { "\($0)-bit" } ?? "mixed-bit"
        let group = q.groupSize.map { ", group size \($0)" } ?? ""
        let source =
            switch q.source {
            case "config": "from config.json; no packed tensors found"
            case "tensors": "detected from .scales tensors"
            default: "config.json and .scales tensors"
            }
        return
            "\(bits) \(q.mode ?? "affine")\(group), \(q.quantizedTensors) packed tensors (\(source))"
    }
}

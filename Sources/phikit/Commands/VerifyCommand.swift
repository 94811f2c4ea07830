import Foundation
import PhiFormats
import PhiKit

/// `phikit verify MODEL|DIR`: prove a model intact, consistent and runnable.
struct VerifyCommand: Command {
    static let name = "verify"
    static let summary = "Check a model's hashes, safetensors, tensor shapes, numbers and tokenizer"
    static let usage = """
        phikit verify <model|dir> [--offline] [--smoke] [--target mlx-swift|mlx-lm|llama.cpp [--fix]]
                      [--threads <n>] [--json]
        """
    static let help = """
        Checks a model in layers and reports each problem with the file and tensor it
        concerns:
          bytes      every file's sha256 (LFS) or git sha1 against the Hub's listing of the
                     snapshot's commit (saved by pull; fetched when missing and online), or
                     against the manifest `convert` wrote; missing, extra and partial files,
                     broken snapshot links, the registry's pinned size
          structure  every safetensors file well-formed; the shard index consistent
          model      tensor names, shapes and dtypes as config.json implies; quantized layouts
          numbers    NaN/Inf anywhere; all-zero or constant tensors
          text       the tokenizer loads and fits the embedding, the chat template renders,
                     every stop token exists
          smoke      (--smoke) a short greedy generation runs, and matches the registry's
                     fingerprint when it has one
          target     (--target) what the app or tool that will load the model needs: a
                     model_type it implements, the config.json keys (and types) its model
                     decodes, quantization modes and integer group sizes, tokenizer files and
                     class, and a stop token where the chat template ends a turn (Phi's
                     <|end|>); facts read from the sources of mlx-swift-lm 3.31.4-114,
                     mlx-swift 0.31.6, swift-transformers 1.3.3, mlx-lm 0.32.2 and llama.cpp
                     b11434 (for llama.cpp: what convert_hf_to_gguf.py needs, the BPE
                     pre-tokenizer it must recognize, and an end-of-generation token where
                     a turn ends)
        Every file is read once, hashes and tensor scans in parallel.

        arguments:
          <model|dir>   registry alias, Hub id in the cache, or model directory

        options:
          --offline     never ask the Hub for a file list (also when HF_HUB_OFFLINE is set)
          --smoke       also load the model and generate a few tokens
          --target <t>  also check for mlx-swift, mlx-lm or llama.cpp (repeatable, or
                        comma-separated)
          --fix         with --target: add the end-of-turn token to generation_config.json's
                        eos_token_id when the loader would not stop there (atomic; a converted
                        model's manifest is updated)
          --threads <n> threads to read with (default: all cores)
          --json        print the whole report as one JSON object

        exit codes: 0 all good, 1 problems found, 66 model not found, 69 the Hub's file list
          could not be fetched (try --offline), 130 interrupted
        """

    var options: VerifyOptions
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        // The flags go straight into the options; MODEL, a positional, is read after them.
        options = VerifyOptions(model: "")
        options.offline = args.flag("--offline")
        options.smoke = args.flag("--smoke")
        let threads = try args.option("--threads", as: Int.self)
        let targetNames = try args.options("--target").flatMap { $0.split(separator: ",") }
        options.fix = args.flag("--fix")
        json = args.flag("--json")
        options.model = try args.positional("model|dir")
        try args.finish()
        try UsageError.check("--threads", threads, in: 1...1024)
        if let threads { options.threads = threads }
        options.targets = try targetNames.map { name in
            guard let t = LoaderTarget(rawValue: String(name)) else {
                throw UsageError(
                    "invalid value '\(name)' for '--target'", hint: "use mlx-swift, mlx-lm or llama.cpp")
            }
            return t
        }
        if options.fix && options.targets.isEmpty { throw UsageError("--fix needs --target") }
    }

    func run() throws {
        let report = try InterruptibleJob.run(
            options, progressLine: Self.progressLine, PhiKit.verify)
        try StandardOutput.print(json ? try Format.json(report) : Self.render(report))
        if !report.passed {
            throw VerifyFailed(directory: report.directory, errors: report.errorCount)
        }
    }

    private static func progressLine(_ event: VerifyProgress) -> String {
        switch event {
        case .fetchingListing(let repoID):
            return "asking the Hub for the files of \(repoID) …"
        case .reading(let done, let total):
            let percent = total > 0 ? 100 * done / total : 100
            return "hashing and scanning the files: \(percent)%"
        case .checking(let layer):
            return "checking \(layer.rawValue) …"
        }
    }

    /// One line per layer, one per finding (severity, layer, file and tensor, message, hint),
    /// and a summary line.
    static func render(_ r: VerifyReport) -> String {
        let layerRows = r.layers.map { [$0.layer.rawValue, $0.status.rawValue, $0.summary] }
        var lines = [Format.table(header: ["LAYER", "STATUS", "CHECKED"], rows: layerRows)]
        if !r.findings.isEmpty { lines.append("") }
        for f in r.findings {
            let place = [f.file, f.tensor.map { "tensor " + $0 }].compactMap { $0 }
                .joined(separator: ", ")
            lines.append(
                "\(f.severity.rawValue): \(f.layer.rawValue): "
                    + (place.isEmpty ? "" : place + ": ") + f.message)
            if let hint = f.hint { lines.append("    hint: \(hint)") }
        }
        if let smoke = r.smoke {
            lines.append("")
            lines.append(
                "smoke: \(smoke.prompt.debugDescription) → \(smoke.text.debugDescription)")
        }
        let errors = r.errorCount
        let warnings = r.warningCount
        let verdict = r.passed ? "OK" : "FAILED"
        lines.append("")
        lines.append(
            "\(verdict): \(errors) \(errors == 1 ? "error" : "errors"), \(warnings) "
                + "\(warnings == 1 ? "warning" : "warnings"); \(r.files.count) files, "
                + "\(Format.bytes(r.bytesRead)) read in \(Format.fixed(r.seconds, decimals: 2)) s"
                + " (\(r.kind), bytes checked against \(r.reference))")
        return lines.joined(separator: "\n")
    }
}

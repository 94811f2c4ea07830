import Foundation
import PhiFormats
import PhiKit

/// `phikit convert SOURCE`: a Hugging Face checkpoint → an MLX model (what mlx_lm.convert
/// writes), optionally quantized.
struct ConvertCommand: Command {
    static let name = "convert"
    static let summary = "Convert a Hugging Face model to MLX format, optionally quantized"
    static let usage = """
        phikit convert <source> [-o <dir>] [-q] [--bits 4] [--group-size 64]
                       [--q-mode affine|mxfp4|nvfp4|mxfp8] [--quant-predicate mixed_3_6]
                       [--dtype float16|bfloat16|float32] [--dequantize] [--max-shard-size 5GiB]
                       [--force] [--upload-repo <org/name>] [--json]
        phikit convert <file.gguf> [-o <dir>] [--exact] [--dtype …] [--dequantize] [--force]
        """
    static let help = """
        Writes the model in MLX format, tensor for tensor what `mlx_lm.convert` writes:
        with -q every Linear and Embedding (lm_head and embed_tokens included) whose last
        dimension divides the group size is stored as uint32-packed weights plus scales and
        biases; norms stay float. config.json gains "quantization" and "quantization_config".
        The source is memory-mapped and converted one tensor at a time, on every core.
        Nothing is written if the source is incomplete or does not match its config.json; the
        output appears only when complete (built in <dir>.incomplete-XXXXXX, then renamed).

        arguments:
          <source>                 a model directory, a Hub id or registry alias (pulled
                                   first when it is not in the Hugging Face cache, as
                                   `mlx_lm.convert --hf-path` does; not with
                                   HF_HUB_OFFLINE), or a GGUF file (llama.cpp / ollama;
                                   architectures phi3, llama, phi2)

        options:
          -o, --output <dir>       output directory (default: the phikit model store,
                                   $PHIKIT_HOME/models/<name>-<bits>bit, where list and run
                                   find it; PHIKIT_HOME defaults to ~/.local/share/phikit)
          -q, --quantize           quantize (MLX affine unless --q-mode says otherwise)
          --bits <n>               affine bits per weight: 2, 3, 4, 5, 6 or 8 (default 4)
          --group-size <n>         affine values per scale/bias: 32, 64 or 128 (default 64)
          --q-mode <mode>          affine (default); mxfp4 (E2M1 values, power-of-two scale
                                   per 32), nvfp4 (E2M1, E4M3 scale per 16) or mxfp8 (E4M3,
                                   power-of-two scale per 32): bits and group are the mode's
          --quant-predicate <r>    mixed-bit affine recipe: mixed_2_6, mixed_3_4, mixed_3_6 or
                                   mixed_4_6 (low/high bits; down_proj of the first and last
                                   eighth of the layers and every third between, and lm_head,
                                   get the high bits)
          --dtype <type>           cast float tensors first: float16, bfloat16 or float32
                                   (default: config.json's torch_dtype)
          -d, --dequantize         turn an MLX-quantized model back into a float one
          --max-shard-size <size>  largest weight file (default 5GiB, as mlx_lm)
          --threads <n>            threads to use (default: all cores)
          --force                  replace an existing output (once the new one is complete)
          --upload-repo <org/name> then push the output to that Hub repo (as `phikit push`;
                                   mlx_lm.convert's option): needs a token with write access
          --json                   print the summary as JSON

        GGUF input: the output is an MLX model with tokenizer.json, tokenizer_config.json
        (chat template included), generation_config.json and a config.json made from the
        metadata. phi3 files become model_type phi3 (LongRoPE factors from
        rope_factors_long/short); llama files become model_type llama, their q/k rows put
        back in Hugging Face order; phi2 files (Phi-1, 1.5, 2) become model_type phi, biases
        kept, a fused attn_qkv split into q/k/v. Block types with an exact MLX form come over without rounding, as MLX affine
        group-32 weights: Q4_0, Q4_1 (4-bit), Q5_0, Q5_1 (5-bit), Q8_0 (8-bit) with fp16
        scales, Q4_K (4-bit) and Q5_K (5-bit) with float32 scales; MXFP4 as mlx mxfp4;
        F32/F16/BF16 stay float. Q6_K, Q2_K and IQ4_NL have none: they are re-quantized to affine 8-bit g32
        (or become float with --dtype), and the summary lists each with its largest error.
          --exact                  refuse instead of re-quantizing anything
          --dtype <type>           float type for float tensors and for the inexact ones
          -d, --dequantize         every tensor float (--dtype, default float32)

        mlx_lm spellings are accepted too, so an mlx_lm.convert command line works as it is:
        --hf-path/--model <source>, --mlx-path, --q-bits, --q-group-size.
        exit codes: 64 bad options or existing output, 65 weights that do not match
          config.json or an unsupported architecture, 66 source not found, 69 network
          (pulling the source), 74 I/O error
        """

    var options: ConvertOptions
    var json: Bool
    /// `--upload-repo`: where the finished output is pushed.
    var uploadRepo: String?

    init(_ args: inout ArgumentReader) throws {
        let output = try args.option("-o", "--output", "--mlx-path")
        // An unset shell variable (`-o "$OUT"`) would otherwise name the current directory.
        if output?.isEmpty == true {
            throw UsageError(
                "-o/--output is empty", hint: "name the output directory, or leave -o out to "
                    + "write into the model store")
        }
        let quantize = args.flag("-q", "--quantize")
        let bits = try args.option("--bits", "--q-bits", as: Int.self)
        let groupSize = try args.option("--group-size", "--q-group-size", as: Int.self)
        let mode = try args.option("--q-mode")
        let recipeName = try args.option("--quant-predicate")
        let namedSource = try args.option("--hf-path", "--model")
        let dtypeName = try args.option("--dtype")
        let dequantize = args.flag("-d", "--dequantize")
        let maxShard = try args.option("--max-shard-size", as: ByteSize.self)
        let threads = try args.option("--threads", as: Int.self)
        let force = args.flag("--force")
        let exact = args.flag("--exact")
        uploadRepo = try args.option("--upload-repo")
        json = args.flag("--json")
        let positional = args.optionalPositional()
        try args.finish()
        guard let source = namedSource ?? positional else {
            throw UsageError("missing argument <source>")
        }
        if namedSource != nil && positional != nil {
            throw UsageError("give the source once: as <source> or as --hf-path")
        }
        var recipe: MixedQuantRecipe?
        if let recipeName {
            guard let r = MixedQuantRecipe(rawValue: recipeName) else {
                throw UsageError(
                    "invalid value '\(recipeName)' for '--quant-predicate'",
                    hint: "use mixed_2_6, mixed_3_4, mixed_3_6 or mixed_4_6")
            }
            recipe = r
        }

        var dtype: DType?
        if let dtypeName {
            guard let d = DType(pythonName: dtypeName), [.f16, .bf16, .f32].contains(d) else {
                throw UsageError(
                    "invalid value '\(dtypeName)' for '--dtype'",
                    hint: "use float16, bfloat16 or float32")
            }
            dtype = d
        }
        if (bits != nil || groupSize != nil || mode != nil || recipe != nil) && !quantize {
            throw UsageError(
                "--bits, --group-size, --q-mode and --quant-predicate need -q/--quantize")
        }
        if let threads, threads < 1 { throw UsageError("--threads must be at least 1") }
        if let uploadRepo, !PhiKit.isHubRepoID(uploadRepo) {
            throw UsageError(
                "invalid value '\(uploadRepo)' for '--upload-repo'",
                hint: "name a Hub repo as ORG/NAME")
        }
        options = ConvertOptions(source: source, output: output)
        options.quantize = quantize
        options.bits = bits
        options.groupSize = groupSize
        options.mode = mode ?? "affine"
        options.quantPredicate = recipe
        options.dtype = dtype
        options.dequantize = dequantize
        if let maxShard { options.maxShardSize = maxShard.bytes }
        if let threads { options.threads = threads }
        options.force = force
        options.exact = exact
    }

    func run() throws {
        let output = isGGUF(path: options.source) ? try runGGUF() : try convertSafetensors()
        if let uploadRepo {
            try PushCommand.push(output, to: uploadRepo, json: false)
        }
    }

    /// Converts, prints the summary, and returns the output directory.
    private func convertSafetensors() throws -> String {
        // A Hub source not yet cached is pulled first, with pull's own progress lines;
        // they are gone before the conversion's progress starts.
        let pullView = PullProgressView()
        defer { pullView.clear() }
        let summary = try InterruptibleJob.run(options) { options in
            try PhiKit.convert(
                options, pull: { pullView.show($0) },
                progress: { p in
                    pullView.clear()
                    Diagnostics.progress(Self.progressLine(p))
                })
        }
        Diagnostics.endProgress()
        if json {
            try StandardOutput.print(try Format.json(summary))
            return summary.outputDirectory
        }
        if summary.bits != nil {
            try StandardOutput.print(
                "Quantized model with \(summary.bitsPerWeightText) bits per weight.")
        }
        let fileCount = summary.files.filter { $0.hasSuffix(".safetensors") }.count
        try StandardOutput.print(
            "Wrote \(summary.outputDirectory): \(Format.grouped(summary.tensorCount)) tensors, "
                + "\(Format.grouped(summary.totalParameters)) parameters, "
                + "\(fileCount) weight \(fileCount == 1 ? "file" : "files"), "
                + "\(Format.bytes(summary.bytesWritten)) in \(Format.fixed(summary.seconds, decimals: 1)) s"
        )
        return summary.outputDirectory
    }

    /// `converting  57/195 tensors  2.10 GB / 7.64 GB  412 MB/s  ETA 13 s`.
    static func progressLine(_ p: ConvertProgress) -> String {
        var line =
            "converting \(p.tensorsDone)/\(p.tensorCount) tensors  "
            + "\(Format.bytes(p.bytesRead)) / \(Format.bytes(p.bytesToRead))"
        if p.elapsed > 0.2 {
            line += "  \(Format.bytes(Int(Double(p.bytesRead) / p.elapsed)))/s"
        }
        if let eta = p.eta { line += "  ETA \(Int(eta.rounded())) s" }
        return line
    }
}

import Foundation
import PhiFormats
import PhiKit

/// `phikit fuse MODEL --adapter-path DIR`: bake an mlx-lm LoRA/DoRA fine-tune into its base
/// model (what mlx_lm.fuse writes).
struct FuseCommand: Command {
    static let name = "fuse"
    static let summary = "Fuse a LoRA or DoRA adapter (mlx_lm.lora's) into its base model"
    static let usage = """
        phikit fuse <model> --adapter-path <dir> [-o <dir>] [--de-quantize] [--force] [--json]
        """
    static let help = """
        Writes the base model with the adapter baked in, tensor for tensor what `mlx_lm.fuse`
        writes: each adapted Linear becomes W + scale·(lora_b.T @ lora_a.T) (DoRA: scaled
        row by row to its learned magnitude m); a quantized base is de-quantized, fused and
        quantized again with its own bits, group size and mode; every other tensor is copied.
        The base is streamed a chunk of rows at a time. The adapter is checked first (keys,
        ranks, shapes, dtypes, DoRA magnitudes): a bad one is refused, nothing is written.

        arguments:
          <model>                  the base model: a directory, a Hub id or registry alias

        options:
          --adapter-path <dir>     the folder mlx_lm.lora wrote: adapters.safetensors and
                                   adapter_config.json (default: ./adapters, as mlx_lm)
          -o, --output <dir>       output directory (default: the phikit model store,
                                   $PHIKIT_HOME/models/<name>-fused)
          --de-quantize            write a float model (a quantized base's layers dequantized)
          --threads <n>            threads to use (default: all cores)
          --force                  replace an existing output (once the new one is complete)
          --json                   print the summary as JSON

        mlx_lm spellings are accepted too: --model <model>, --save-path <dir>, --dequantize.
        exit codes: 64 bad options or existing output, 65 an adapter that does not fit the
          model or bad model data, 66 model or adapter not found, 74 I/O error
        """

    var options: FuseOptions
    var json: Bool

    init(_ args: inout ArgumentReader) throws {
        let output = try args.option("-o", "--output", "--save-path")
        if output?.isEmpty == true {
            throw UsageError("-o/--output is empty", hint: "name the output directory")
        }
        let adapter = try args.option("--adapter-path")
        let named = try args.option("--model")
        let dequantize = args.flag("--de-quantize", "--dequantize")
        let threads = try args.option("--threads", as: Int.self)
        let force = args.flag("--force")
        json = args.flag("--json")
        let positional = args.optionalPositional()
        try args.finish()
        guard let model = named ?? positional else { throw UsageError("missing argument <model>") }
        if named != nil && positional != nil {
            throw UsageError("give the model once: as <model> or as --model")
        }
        if let threads, threads < 1 { throw UsageError("--threads must be at least 1") }
        options = FuseOptions(model: model, adapterPath: adapter ?? "adapters", output: output)
        options.dequantize = dequantize
        options.force = force
        if let threads { options.threads = threads }
    }

    func run() throws {
        // Ctrl-C stops between chunks: exit 130, the output never half-written (as convert).
        let summary = try InterruptibleJob.run { cancel in
            var options = options
            options.cancellation = cancel
            return try PhiKit.fuse(options) { p in
                Diagnostics.progress(
                    ConvertCommand.progressLine(p).replacingOccurrences(of: "converting", with: "fusing"))
            }
        }
        Diagnostics.endProgress()
        if json {
            try StandardOutput.print(try Format.json(summary))
            return
        }
        let m = summary.model
        try StandardOutput.print(
            "Wrote \(m.outputDirectory): \(summary.adaptedLayers) \(summary.fineTuneType) "
                + "\(summary.adaptedLayers == 1 ? "layer" : "layers") fused, "
                + "\(Format.grouped(m.tensorCount)) tensors, "
                + "\(Format.bytes(m.bytesWritten)) in \(Format.fixed(m.seconds, decimals: 1)) s")
    }
}

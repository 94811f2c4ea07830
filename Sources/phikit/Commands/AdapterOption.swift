import PhiKit

/// `--adapter-path <dir>`, which run, chat and serve share: an mlx-lm LoRA/DoRA adapter
/// folder applied at run time, without fusing (PhiKit's RuntimeAdapter).
enum AdapterOption {
    static let help = """
          --adapter-path <dir>     apply the LoRA/DoRA adapter mlx_lm.lora wrote there
                                   (adapters.safetensors, adapter_config.json) at run time,
                                   without fusing it (phikit fuse bakes it in)
        """

    /// Reads the option; call before `finish()` like every option.
    static func read(_ args: inout ArgumentReader) throws -> String? {
        let path = try args.option("--adapter-path")
        if let path, path.isEmpty { throw UsageError("--adapter-path needs a folder") }
        return path
    }
}

/// `serve --adapter NAME=DIR` (repeatable): adapters loaded next to the base that each request
/// selects by name (`"adapter": NAME`, or NAME as its `model`), batched together.
enum NamedAdapterOption {
    static let help = """
          --adapter <name>=<dir>   load another LoRA/DoRA adapter (repeatable): a request
                                   selects it with "adapter": "<name>" or "model": "<name>";
                                   requests with different adapters (or none) are batched
                                   together. GET /v1/models lists them
        """

    /// Reads every `--adapter`; call before `finish()` like every option.
    static func read(_ args: inout ArgumentReader) throws -> [NamedAdapter] {
        try args.options("--adapter").map { spec in
            let parts = spec.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
                throw UsageError("--adapter takes NAME=DIR (such as --adapter sql=./sql-lora), not '\(spec)'")
            }
            return NamedAdapter(name: parts[0], directory: parts[1])
        }
    }
}

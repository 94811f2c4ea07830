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

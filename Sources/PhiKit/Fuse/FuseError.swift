import PhiFormats

/// Why `fuse` refused. Every adapter problem is found before the first byte of output is
/// written, so none of these (except `io`) leaves anything on disk.
public enum FuseError: UserFacingError, Equatable {
    /// The adapter folder or one of its two files is not there.
    case adapterMissing(path: String)
    /// adapter_config.json is not JSON, or a field is missing or of the wrong type.
    case badAdapterConfig(path: String, detail: String, hint: String? = nil)
    /// A tensor of adapters.safetensors that cannot be fused: `detail` says why.
    case badAdapterTensor(file: String, name: String, detail: String)
    /// A module the adapter wraps (by `num_layers` and `keys`) lacks a tensor mlx_lm would
    /// otherwise fill with its random initialisation.
    case missingAdapterTensor(file: String, name: String)
    case unsupported(String)

    public var message: String {
        switch self {
        case .adapterMissing(let path): "\(path): no such adapter file or folder"
        case .badAdapterConfig(let path, let detail, _): "\(path): \(detail)"
        case .badAdapterTensor(let file, let name, let detail): "\(file): tensor '\(name)' \(detail)"
        case .missingAdapterTensor(let file, let name):
            "\(file): tensor '\(name)' is missing (mlx_lm would fuse its random initial value)"
        case .unsupported(let what): what
        }
    }

    public var hint: String? {
        switch self {
        case .adapterMissing:
            "an adapter is the folder mlx_lm.lora wrote (adapters.safetensors and "
                + "adapter_config.json)"
        case .badAdapterConfig(_, _, let hint): hint
        case .badAdapterTensor, .missingAdapterTensor:
            "is this adapter for this base model? (adapter_config.json's \"model\" says which)"
        case .unsupported: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .adapterMissing: .noInput
        default: .dataError
        }
    }
}

/// What MLX Swift decodes, read from its sources (`LoaderTarget.mlxSwift.sourceVersion`):
/// - `LLMTypeRegistry` (Libraries/MLXLLM/LLMModelFactory.swift) maps `model_type` to a model;
/// - each model's configuration is a `Decodable` whose `init(from:)` says which config.json
///   keys are required (`decode`) and which may be absent (`decodeIfPresent`), and of what
///   Swift type (Models/Phi3.swift, Phi.swift, PhiMoE.swift, Llama.swift);
/// - `BaseConfiguration.Quantization` (MLXLMCommon/BaseConfiguration.swift) needs
///   `group_size` and `bits` as integers in `quantization` and in every per-layer object
///   (a `null` group size, which mlx_lm writes for mixed recipes without --q-group-size,
///   fails to decode), `mode` one of mlx-swift's `QuantizationMode` (MLX/Ops.swift);
/// - stop tokens (`LLMModelFactory._load`, `Evaluate.buildStopTokenIds`): config.json's
///   `eos_token_id` (int or list), replaced by generation_config.json's when it has one, plus
///   the tokenizer's eos token, plus the app's `extraEOSTokens` (a directory loaded by path
///   has none);
/// - swift-transformers (Sources/Hub/Hub.swift, Sources/Tokenizers/Tokenizer.swift):
///   tokenizer.json is required, tokenizer_config.json's `tokenizer_class` must be a known
///   class, the chat template is chat_template.jinja, else chat_template.json, else
///   tokenizer_config.json's `chat_template`.
enum MLXSwiftFacts {
    enum KeyType: String {
        case int = "an integer"
        case float = "a number"
        case bool = "a boolean"
        case string = "a string"
        case object = "an object"
    }

    struct Key {
        let name: String
        let type: KeyType
        let required: Bool
    }

    /// Every `model_type` LLMTypeRegistry creates.
    static let modelTypes: Set<String> = [
        "mistral", "mixtral", "llama", "phi", "phi3", "phimoe", "gemma", "gemma2", "gemma3",
        "gemma3_text", "gemma3n", "gemma4", "gemma4_unified", "gemma4_text", "qwen2", "qwen3",
        "qwen3_moe", "qwen3_next", "qwen3_5", "qwen3_5_moe", "qwen3_5_text", "nanbeige",
        "minicpm", "starcoder2", "cohere", "openelm", "internlm2", "deepseek_v2", "deepseek_v3",
        "granite", "helium", "granitemoehybrid", "mimo", "mimo_v2_flash", "minimax", "glm4",
        "glm4_moe", "glm4_moe_lite", "acereason", "falcon_h1", "bitnet", "smollm3", "ernie4_5",
        "lfm2", "baichuan_m1", "exaone4", "gpt_oss", "olmoe", "olmo2", "olmo3", "bailing_moe",
        "lfm2_moe", "nanochat", "nemotron_h", "afmoe", "jamba", "mamba2", "mistral3", "apertus",
        "hunyuan_v1_dense", "nemotron_labs_diffusion",
    ]

    /// The keys each Phi-family configuration decodes (others are not checked key by key).
    static let keys: [String: [Key]] = [
        "phi3": [
            Key(name: "hidden_size", type: .int, required: true),
            Key(name: "num_hidden_layers", type: .int, required: true),
            Key(name: "intermediate_size", type: .int, required: true),
            Key(name: "num_attention_heads", type: .int, required: true),
            Key(name: "rms_norm_eps", type: .float, required: true),
            Key(name: "vocab_size", type: .int, required: true),
            Key(name: "num_key_value_heads", type: .int, required: true),
            Key(name: "max_position_embeddings", type: .int, required: true),
            Key(name: "original_max_position_embeddings", type: .int, required: true),
            Key(name: "rope_theta", type: .float, required: false),
            Key(name: "rope_traditional", type: .bool, required: false),
            Key(name: "rope_scaling", type: .object, required: false),
            Key(name: "partial_rotary_factor", type: .float, required: false),
            Key(name: "tie_word_embeddings", type: .bool, required: false),
        ],
        "phi": [
            Key(name: "max_position_embeddings", type: .int, required: true),
            Key(name: "vocab_size", type: .int, required: true),
            Key(name: "hidden_size", type: .int, required: true),
            Key(name: "num_attention_heads", type: .int, required: true),
            Key(name: "num_hidden_layers", type: .int, required: true),
            Key(name: "num_key_value_heads", type: .int, required: false),
            Key(name: "partial_rotary_factor", type: .float, required: true),
            Key(name: "intermediate_size", type: .int, required: true),
            Key(name: "layer_norm_eps", type: .float, required: true),
            Key(name: "rope_theta", type: .float, required: false),
        ],
        // A synthesized Decodable: every key is required, defaults or not.
        "phimoe": [
            Key(name: "model_type", type: .string, required: true),
            Key(name: "vocab_size", type: .int, required: true),
            Key(name: "hidden_size", type: .int, required: true),
            Key(name: "intermediate_size", type: .int, required: true),
            Key(name: "num_hidden_layers", type: .int, required: true),
            Key(name: "num_attention_heads", type: .int, required: true),
            Key(name: "num_key_value_heads", type: .int, required: true),
            Key(name: "max_position_embeddings", type: .int, required: true),
            Key(name: "original_max_position_embeddings", type: .int, required: true),
            Key(name: "rms_norm_eps", type: .float, required: true),
            Key(name: "rope_scaling", type: .object, required: false),
            Key(name: "num_local_experts", type: .int, required: true),
            Key(name: "num_experts_per_tok", type: .int, required: true),
            Key(name: "rope_theta", type: .float, required: true),
        ],
    ]

    /// mlx-swift's `QuantizationMode` cases.
    static let quantizationModes: Set<String> = ["affine", "mxfp4", "mxfp8", "nvfp4"]

    /// swift-transformers' `TokenizerModel.knownTokenizers` (a `Fast` suffix is dropped first).
    static let tokenizerClasses: Set<String> = [
        "BertTokenizer", "CodeGenTokenizer", "CodeLlamaTokenizer", "CohereTokenizer",
        "DistilbertTokenizer", "DistilBertTokenizer", "FalconTokenizer", "GemmaTokenizer",
        "GPT2Tokenizer", "LlamaTokenizer", "RobertaTokenizer", "T5Tokenizer", "TokenizersBackend",
        "PreTrainedTokenizer", "Qwen2Tokenizer", "WhisperTokenizer", "XLMRobertaTokenizer",
        "Xlm-RobertaTokenizer",
    ]
}

/// The model hyperparameters a GGUF file states in its metadata, read under the
/// `<architecture>.` prefix llama.cpp uses (`phi3.context_length`, `llama.block_count`).
/// Every field is optional here; `convert` decides which it requires.
public struct GGUFHyperparameters: Sendable, Equatable, Encodable {
    public var architecture: String?
    public var name: String?
    public var contextLength: Int?
    public var embeddingLength: Int?
    public var feedForwardLength: Int?
    public var blockCount: Int?
    public var headCount: Int?
    public var headCountKV: Int?
    public var ropeFreqBase: Double?
    public var ropeDimensionCount: Int?
    public var ropeScalingType: String?
    public var ropeOriginalContextLength: Int?
    public var ropeAttentionFactor: Double?
    public var rmsEpsilon: Double?
    /// LayerNorm epsilon (phi2's `attention.layer_norm_epsilon`).
    public var layerNormEpsilon: Double?
    public var slidingWindow: Int?
    public var tokenizerModel: String?
    public var tokenizerPre: String?
    public var vocabularySize: Int?
    public var hasChatTemplate: Bool
    /// `general.file_type` (llama_ftype), e.g. 2 = mostly Q4_0, 15 = mostly Q4_K_M.
    public var fileType: Int?

    public init(_ file: GGUFFile) {
        let arch = file.architecture
        architecture = arch
        func a(_ key: String) -> GGUFValue? { arch.flatMap { file.value("\($0).\(key)") } }
        name = file.value("general.name")?.stringValue
        contextLength = a("context_length")?.intValue
        embeddingLength = a("embedding_length")?.intValue
        feedForwardLength = a("feed_forward_length")?.intValue
        blockCount = a("block_count")?.intValue
        headCount = a("attention.head_count")?.intValue
        headCountKV = a("attention.head_count_kv")?.intValue
        ropeFreqBase = a("rope.freq_base")?.doubleValue
        ropeDimensionCount = a("rope.dimension_count")?.intValue
        ropeScalingType = a("rope.scaling.type")?.stringValue
        ropeOriginalContextLength = a("rope.scaling.original_context_length")?.intValue
        ropeAttentionFactor = a("rope.scaling.attn_factor")?.doubleValue
        rmsEpsilon = a("attention.layer_norm_rms_epsilon")?.doubleValue
        layerNormEpsilon = a("attention.layer_norm_epsilon")?.doubleValue
        slidingWindow = a("attention.sliding_window")?.intValue
        tokenizerModel = file.value("tokenizer.ggml.model")?.stringValue
        tokenizerPre = file.value("tokenizer.ggml.pre")?.stringValue
        vocabularySize =
            file.value("tokenizer.ggml.tokens")?.arrayValue?.count ?? a("vocab_size")?.intValue
        hasChatTemplate = file.value("tokenizer.chat_template")?.stringValue != nil
        fileType = file.value("general.file_type")?.intValue
    }

    enum CodingKeys: String, CodingKey {
        case architecture, name
        case contextLength = "context_length"
        case embeddingLength = "embedding_length"
        case feedForwardLength = "feed_forward_length"
        case blockCount = "block_count"
        case headCount = "head_count"
        case headCountKV = "head_count_kv"
        case ropeFreqBase = "rope_freq_base"
        case ropeDimensionCount = "rope_dimension_count"
        case ropeScalingType = "rope_scaling_type"
        case ropeOriginalContextLength = "rope_original_context_length"
        case ropeAttentionFactor = "rope_attention_factor"
        case rmsEpsilon = "rms_epsilon"
        case layerNormEpsilon = "layer_norm_epsilon"
        case slidingWindow = "sliding_window"
        case tokenizerModel = "tokenizer_model"
        case tokenizerPre = "tokenizer_pre"
        case vocabularySize = "vocabulary_size"
        case hasChatTemplate = "has_chat_template"
        case fileType = "file_type"
    }
}

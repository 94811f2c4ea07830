import Foundation

/// A `config.json` of any architecture in `Architectures.all` (`phi3`: Phi-3, 3.5-mini, 4,
/// 4-mini; `phi`: Phi-1, 1.5, 2; `llama`; …): the fields every architecture shares, and the
/// schema's own (`architectureFields`: phi's `qk_layernorm`, phimoe's expert counts), which
/// its schema declares, defaults and validates beside itself. Decoded leniently (absent optional keys take the transformers defaults of
/// the config's `model_type`), then `validate()` checks strictly everything the engine relies
/// on, naming the offending field.
public struct ModelConfig: Sendable, Equatable {
    public var modelType: String
    public var hiddenSize: Int
    public var intermediateSize: Int
    /// `num_hidden_layers`
    public var layerCount: Int
    /// `num_attention_heads`
    public var attentionHeads: Int
    /// `num_key_value_heads`, else `attentionHeads` (MHA).
    public var kvHeads: Int
    public var vocabSize: Int
    /// 0 for an unvalidated config without heads (inspect shows such configs; never trap).
    public var headDim: Int { attentionHeads > 0 ? hiddenSize / attentionHeads : 0 }
    /// Fraction of each head that is rotated (0.75 on Phi-4-mini, 0.4 on Phi-2); the default
    /// is the architecture's (`ArchitectureSchema.defaultPartialRotaryFactor`).
    public var partialRotaryFactor: Double
    /// Rotated dimensions per head: `Int(Double(headDim) * partialRotaryFactor)`, as mlx-lm.
    /// Safe on unvalidated configs (a headDim near Int.max must not trap the conversion).
    public var ropeDim: Int {
        let dim = Double(headDim) * partialRotaryFactor
        return dim.isFinite && abs(dim) < 1e15 ? Int(dim) : 0
    }
    public var ropeTheta: Double
    /// `rms_norm_eps` (phi3's and llama's RMSNorms, phimoe's LayerNorms); default 1e-5.
    public var rmsNormEps: Double
    /// The fields only this `model_type` reads, its schema's `Fields` (see `fields(_:)`).
    public var architectureFields: ArchitectureFieldsValue
    /// `hidden_act` as written (`gelu_new`, `silu`); nil when absent. Each architecture
    /// accepts the ones its forward pass computes.
    public var hiddenAct: String?
    /// The architecture's default when absent (`ArchitectureSchema.defaultMaxPositions`).
    public var maxPositionEmbeddings: Int
    /// LongRoPE switches from short to long factors beyond this; engines use `?? 4096`
    /// when absent, like mlx-lm.
    public var originalMaxPositionEmbeddings: Int?
    public var ropeScaling: RopeScaling?
    public var tieWordEmbeddings: Bool
    /// `eos_token_id`, an int or a list in the file; empty when absent.
    public var eosTokenIds: [Int]
    public var bosTokenId: Int?
    /// `torch_dtype` (transformers 4) or `dtype` (transformers 5); nil if absent or not a
    /// dtype name (e.g. "auto").
    public var torchDType: DType?
    /// MLX affine quantization (`quantization`, else an MLX-style `quantization_config`).
    public var quantization: QuantizationConfig?
    /// `quantization_config.quant_method` of a non-MLX quantized source (gptq, awq, fp8…),
    /// which phikit cannot read; nil for float and MLX models.
    public var foreignQuantMethod: String?
    public var slidingWindow: Int?
    /// `head_dim` when config.json states it (llama writes it); phikit's heads are
    /// hidden_size / num_attention_heads wide, so validate refuses any other value.
    public var statedHeadDim: Int?
    /// Where this config came from, for error messages (`…/config.json`).
    public var source: String

    public init(
        modelType: String = "phi3", hiddenSize: Int, intermediateSize: Int, layerCount: Int,
        attentionHeads: Int, kvHeads: Int? = nil, vocabSize: Int, partialRotaryFactor: Double = 1.0,
        ropeTheta: Double = 10000, rmsNormEps: Double = 1e-5,
        architectureFields: (any ArchitectureFields)? = nil, hiddenAct: String? = nil,
        maxPositionEmbeddings: Int = 4096,
        originalMaxPositionEmbeddings: Int? = nil, ropeScaling: RopeScaling? = nil,
        tieWordEmbeddings: Bool = false, eosTokenIds: [Int] = [], bosTokenId: Int? = nil,
        torchDType: DType? = nil, quantization: QuantizationConfig? = nil,
        slidingWindow: Int? = nil,
        source: String = "config.json"
    ) {
        self.modelType = modelType
        self.hiddenSize = hiddenSize
        self.intermediateSize = intermediateSize
        self.layerCount = layerCount
        self.attentionHeads = attentionHeads
        self.kvHeads = kvHeads ?? attentionHeads
        self.vocabSize = vocabSize
        self.partialRotaryFactor = partialRotaryFactor
        self.ropeTheta = ropeTheta
        self.rmsNormEps = rmsNormEps
        self.architectureFields = ArchitectureFieldsValue(
            architectureFields ?? Architectures.schema(for: modelType)?.fieldsType.init()
                ?? NoArchitectureFields())
        self.hiddenAct = hiddenAct
        self.maxPositionEmbeddings = maxPositionEmbeddings
        self.originalMaxPositionEmbeddings = originalMaxPositionEmbeddings
        self.ropeScaling = ropeScaling
        self.tieWordEmbeddings = tieWordEmbeddings
        self.eosTokenIds = eosTokenIds
        self.bosTokenId = bosTokenId
        self.torchDType = torchDType
        self.quantization = quantization
        self.foreignQuantMethod = nil
        self.slidingWindow = slidingWindow
        self.source = source
    }

    /// Reads `<directory>/config.json` and validates it.
    public static func load(directory: String) throws(ConfigError) -> ModelConfig {
        let path = (directory as NSString).appendingPathComponent("config.json")
        return try ModelConfig(data: readMetadataFile(path), source: path)
    }

    /// Decodes config.json bytes; `source` names the file in errors. Validates unless told
    /// not to (a `verify` that wants to report several problems may decode first).
    public init(
        data: some Collection<UInt8>, source: String, validating: Bool = true
    )
        throws(ConfigError)
    {
        do {
            self = try JSONDecoder().decode(
                ModelConfig.self, from: try strictJSON(data, path: source))
        } catch {
            throw ConfigError.wrapping(error, path: source)
        }
        self.source = source
        if validating { try validate() }
    }
}

/// One JSON policy for every metadata file (issue 17: a duplicate key or a byte-order mark
/// passed `verify` and `run` through Foundation's lenient decoder, yet `convert` refused it):
/// the bytes must first pass `JSONValue`'s strict parser (no duplicate keys, no BOM, valid
/// UTF-8, nothing after the value); then Foundation decodes the typed fields.
func strictJSON(_ data: some Collection<UInt8>, path: String) throws(ConfigError) -> Data {
    let bytes = Data(data)
    do {
        _ = try JSONValue(parsing: bytes)
    } catch {
        throw .invalidJSON(path: path, detail: error.message)
    }
    return bytes
}

/// Reads a small JSON metadata file, mapping "absent" to `.missingFile` (exit 66).
public func readMetadataFile(_ path: String) throws(ConfigError) -> Data {
    do {
        return Data(try LocalFile.read(path))
    } catch {
        if error.errno == ENOENT && error.wrongType == nil { throw .missingFile(path: path) }
        throw .unreadable(error)
    }
}

// MARK: - Decoding (lenient: absent → default; present with the wrong type → error)

extension ModelConfig: Decodable {
    enum CodingKeys: String, CodingKey {
        case modelType = "model_type"
        case hiddenSize = "hidden_size"
        case intermediateSize = "intermediate_size"
        case layerCount = "num_hidden_layers"
        case attentionHeads = "num_attention_heads"
        case kvHeads = "num_key_value_heads"
        case vocabSize = "vocab_size"
        case partialRotaryFactor = "partial_rotary_factor"
        case ropeTheta = "rope_theta"
        case rmsNormEps = "rms_norm_eps"
        case hiddenAct = "hidden_act"
        case maxPositionEmbeddings = "max_position_embeddings"
        case originalMaxPositionEmbeddings = "original_max_position_embeddings"
        case ropeScaling = "rope_scaling"
        case ropeParameters = "rope_parameters"
        case tieWordEmbeddings = "tie_word_embeddings"
        case eosTokenId = "eos_token_id"
        case bosTokenId = "bos_token_id"
        case torchDType = "torch_dtype"
        case dtype
        case quantization
        case quantizationConfig = "quantization_config"
        case slidingWindow = "sliding_window"
        case statedHeadDim = "head_dim"
    }

    /// transformers 5 moves `rope_theta` (and sometimes `partial_rotary_factor`) into
    /// `rope_parameters`, next to the scaling kind.
    private struct RopeParameters: Decodable {
        var ropeTheta: Double?, partialRotaryFactor: Double?, ropeType: String?
        enum CodingKeys: String, CodingKey {
            case ropeTheta = "rope_theta"
            case partialRotaryFactor = "partial_rotary_factor"
            case ropeType = "rope_type"
            case type
        }
        init(from decoder: any Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            ropeTheta = try c.decodeIfPresent(Double.self, forKey: .ropeTheta)
            partialRotaryFactor = try c.decodeIfPresent(Double.self, forKey: .partialRotaryFactor)
            ropeType =
                try c.decodeIfPresent(String.self, forKey: .ropeType)
                ?? c.decodeIfPresent(String.self, forKey: .type)
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        modelType = try c.decode(String.self, forKey: .modelType)
        // Defaults that differ between architectures; an unknown type is refused by validate.
        let schema = Architectures.schema(for: modelType)
        hiddenSize = try c.decode(Int.self, forKey: .hiddenSize)
        intermediateSize = try c.decode(Int.self, forKey: .intermediateSize)
        layerCount = try c.decode(Int.self, forKey: .layerCount)
        attentionHeads = try c.decode(Int.self, forKey: .attentionHeads)
        kvHeads = try c.decodeIfPresent(Int.self, forKey: .kvHeads) ?? attentionHeads
        vocabSize = try c.decode(Int.self, forKey: .vocabSize)

        let ropeParameters = try c.decodeIfPresent(RopeParameters.self, forKey: .ropeParameters)
        partialRotaryFactor =
            try c.decodeIfPresent(Double.self, forKey: .partialRotaryFactor)
            ?? ropeParameters?.partialRotaryFactor ?? schema?.defaultPartialRotaryFactor ?? 1.0
        ropeTheta =
            try c.decodeIfPresent(Double.self, forKey: .ropeTheta)
            ?? ropeParameters?.ropeTheta ?? 10000
        if let scaling = try c.decodeIfPresent(RopeScaling.self, forKey: .ropeScaling) {
            ropeScaling = scaling
        } else if let type = ropeParameters?.ropeType, type != "default" {
            ropeScaling = try c.decode(RopeScaling.self, forKey: .ropeParameters)
        } else {
            ropeScaling = nil
        }
        rmsNormEps = try c.decodeIfPresent(Double.self, forKey: .rmsNormEps) ?? 1e-5
        hiddenAct = try c.decodeIfPresent(String.self, forKey: .hiddenAct)
        architectureFields = ArchitectureFieldsValue(
            try schema?.fieldsType.init(from: decoder) ?? NoArchitectureFields())
        maxPositionEmbeddings =
            try c.decodeIfPresent(Int.self, forKey: .maxPositionEmbeddings)
            ?? schema?.defaultMaxPositions ?? 4096
        originalMaxPositionEmbeddings = try c.decodeIfPresent(
            Int.self, forKey: .originalMaxPositionEmbeddings)
        tieWordEmbeddings = try c.decodeIfPresent(Bool.self, forKey: .tieWordEmbeddings) ?? false
        eosTokenIds = try Self.decodeIntOrList(c, .eosTokenId)
        bosTokenId = try c.decodeIfPresent(Int.self, forKey: .bosTokenId)
        let dtypeName =
            try c.decodeIfPresent(String.self, forKey: .torchDType)
            ?? c.decodeIfPresent(String.self, forKey: .dtype)
        torchDType = dtypeName.flatMap { DType(pythonName: $0) }
        slidingWindow = try c.decodeIfPresent(Int.self, forKey: .slidingWindow)
        statedHeadDim = try c.decodeIfPresent(Int.self, forKey: .statedHeadDim)
        source = "config.json"

        (quantization, foreignQuantMethod) = try Self.decodeQuantization(c)
    }

    /// `quantization` is mlx-lm's own key; `quantization_config` is either mlx-lm's copy of it
    /// (kept for the HF model tree) or a transformers quantizer's, told apart by
    /// `quant_method`.
    private static func decodeQuantization(
        _ c: KeyedDecodingContainer<CodingKeys>
    ) throws -> (QuantizationConfig?, String?) {
        if try c.contains(.quantization) && !c.decodeNil(forKey: .quantization) {
            return (try c.decode(QuantizationConfig.self, forKey: .quantization), nil)
        }
        guard try c.contains(.quantizationConfig) && !c.decodeNil(forKey: .quantizationConfig),
            let raw = try? c.nestedContainer(
                keyedBy: QuantizationConfig.AnyKey.self, forKey: .quantizationConfig)
        else { return (nil, nil) }
        if QuantizationConfig.looksLikeMLX(raw) {
            return (try c.decode(QuantizationConfig.self, forKey: .quantizationConfig), nil)
        }
        let method = try? raw.decode(String.self, forKey: QuantizationConfig.AnyKey("quant_method"))
        return (nil, method ?? "unknown")
    }

    /// `eos_token_id` is an int in most configs, a list in newer ones, null in some.
    static func decodeIntOrList<K: CodingKey>(
        _ c: KeyedDecodingContainer<K>, _ key: K
    ) throws
        -> [Int]
    {
        guard c.contains(key), try !c.decodeNil(forKey: key) else { return [] }
        if let one = try? c.decode(Int.self, forKey: key) { return [one] }
        if let list = try? c.decode([Int].self, forKey: key) { return list }
        throw DecodingError.dataCorrupted(
            .init(
                codingPath: c.codingPath + [key],
                debugDescription: "must be an integer or a list of integers"))
    }
}

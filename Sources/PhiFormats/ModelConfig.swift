import Foundation

/// A Phi-3 family `config.json` (Phi-3, Phi-3.5-mini, Phi-4-mini: `model_type` "phi3").
/// Decoded leniently (absent optional keys take the transformers/mlx-lm defaults), then
/// `validate()` checks strictly everything the engine relies on, naming the offending field.
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
    /// Fraction of each head that is rotated (0.75 on Phi-4-mini); default 1.0.
    public var partialRotaryFactor: Double
    /// Rotated dimensions per head: `Int(Double(headDim) * partialRotaryFactor)`, as mlx-lm.
    /// Safe on unvalidated configs (a headDim near Int.max must not trap the conversion).
    public var ropeDim: Int {
        let dim = Double(headDim) * partialRotaryFactor
        return dim.isFinite && abs(dim) < 1e15 ? Int(dim) : 0
    }
    public var ropeTheta: Double
    public var rmsNormEps: Double
    /// Default 4096 (transformers' Phi3Config) when absent.
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
    /// `attention_bias` (phimoe): q/k/v/o projections with biases; default false.
    public var attentionBias = false
    /// `lm_head_bias` (phimoe): an output head with a bias; default false.
    public var lmHeadBias = false
    /// `num_local_experts` and `num_experts_per_tok` (phimoe); nil when absent.
    public var localExperts: Int?
    public var expertsPerToken: Int?
    /// `router_jitter_noise` (phimoe; default 0.01): at inference, the width of the
    /// sparsemixer's band (see PhiMoERouter).
    public var routerJitterNoise = 0.01
    /// Where this config came from, for error messages (`…/config.json`).
    public var source: String

    public init(
        modelType: String = "phi3", hiddenSize: Int, intermediateSize: Int, layerCount: Int,
        attentionHeads: Int, kvHeads: Int? = nil, vocabSize: Int, partialRotaryFactor: Double = 1.0,
        ropeTheta: Double = 10000, rmsNormEps: Double = 1e-5, maxPositionEmbeddings: Int = 4096,
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
        case attentionBias = "attention_bias"
        case lmHeadBias = "lm_head_bias"
        case localExperts = "num_local_experts"
        case expertsPerToken = "num_experts_per_tok"
        case routerJitterNoise = "router_jitter_noise"
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
        hiddenSize = try c.decode(Int.self, forKey: .hiddenSize)
        intermediateSize = try c.decode(Int.self, forKey: .intermediateSize)
        layerCount = try c.decode(Int.self, forKey: .layerCount)
        attentionHeads = try c.decode(Int.self, forKey: .attentionHeads)
        kvHeads = try c.decodeIfPresent(Int.self, forKey: .kvHeads) ?? attentionHeads
        vocabSize = try c.decode(Int.self, forKey: .vocabSize)

        let ropeParameters = try c.decodeIfPresent(RopeParameters.self, forKey: .ropeParameters)
        partialRotaryFactor =
            try c.decodeIfPresent(Double.self, forKey: .partialRotaryFactor)
            ?? ropeParameters?.partialRotaryFactor ?? 1.0
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
        maxPositionEmbeddings =
            try c.decodeIfPresent(Int.self, forKey: .maxPositionEmbeddings) ?? 4096
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
        attentionBias = try c.decodeIfPresent(Bool.self, forKey: .attentionBias) ?? false
        lmHeadBias = try c.decodeIfPresent(Bool.self, forKey: .lmHeadBias) ?? false
        localExperts = try c.decodeIfPresent(Int.self, forKey: .localExperts)
        expertsPerToken = try c.decodeIfPresent(Int.self, forKey: .expertsPerToken)
        routerJitterNoise =
            try c.decodeIfPresent(Double.self, forKey: .routerJitterNoise) ?? 0.01
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

// MARK: - Validation (strict: everything the engine indexes with)

extension ModelConfig {
    public func validate() throws(ConfigError) {
        guard Architectures.schema(for: modelType) != nil else {
            throw .unsupportedArchitecture(path: source, modelType: modelType)
        }
        // Upper bounds far above any Phi model (Phi-3.5-mini: 3072, 8192, 32, 32, 32064,
        // 131072) but low enough that every shape and byte count derived from them fits in
        // an Int: a lying config.json must fail here, not overflow later (found by fuzzing).
        for (field, value, limit) in [
            ("hidden_size", hiddenSize, 1 << 16), ("intermediate_size", intermediateSize, 1 << 18),
            ("num_hidden_layers", layerCount, 1 << 10),
            ("num_attention_heads", attentionHeads, 1 << 10),
            ("num_key_value_heads", kvHeads, 1 << 10), ("vocab_size", vocabSize, 1 << 22),
            ("max_position_embeddings", maxPositionEmbeddings, 1 << 24),
        ] where value <= 0 || value > limit {
            throw invalid(
                field,
                value <= 0
                    ? "must be positive, got \(value)"
                    : "is \(value), more than phikit supports (\(limit))")
        }
        guard hiddenSize % attentionHeads == 0 else {
            throw invalid(
                "num_attention_heads", "(\(attentionHeads)) must divide hidden_size (\(hiddenSize))"
            )
        }
        guard attentionHeads % kvHeads == 0 else {
            throw invalid(
                "num_key_value_heads",
                "(\(kvHeads)) must divide num_attention_heads (\(attentionHeads))")
        }
        guard partialRotaryFactor > 0, partialRotaryFactor <= 1 else {
            throw invalid("partial_rotary_factor", "must be in (0, 1], got \(partialRotaryFactor)")
        }
        guard ropeDim > 0, ropeDim % 2 == 0 else {
            throw invalid(
                "partial_rotary_factor",
                "gives an odd or empty rotary dimension \(ropeDim) (head_dim \(headDim))")
        }
        guard rmsNormEps > 0, rmsNormEps.isFinite else {
            throw invalid("rms_norm_eps", "must be positive")
        }
        // Below 1 the inverse frequencies theta^-e overflow to infinity and every angle is NaN.
        guard ropeTheta >= 1, ropeTheta.isFinite else {
            throw invalid("rope_theta", "must be at least 1, got \(ropeTheta)")
        }
        if let original = originalMaxPositionEmbeddings, original <= 0 {
            throw invalid("original_max_position_embeddings", "must be positive, got \(original)")
        }
        if let window = slidingWindow, window <= 0 {
            throw invalid("sliding_window", "must be positive, got \(window)")
        }
        for id in eosTokenIds + (bosTokenId.map { [$0] } ?? []) where id < 0 || id >= vocabSize {
            let field = eosTokenIds.contains(id) ? "eos_token_id" : "bos_token_id"
            throw invalid(field, "\(id) is outside the vocabulary (vocab_size \(vocabSize))")
        }
        if modelType == "phimoe" { try PhiMoESchema.validateExperts(self) }
        if let scaling = ropeScaling { try validate(scaling) }
        if let quantization { try validate(quantization) }
        if let method = foreignQuantMethod {
            throw invalid(
                "quantization_config.quant_method", "'\(method)' is not supported (only MLX affine)"
            )
        }
    }

    private func validate(_ scaling: RopeScaling) throws(ConfigError) {
        guard RopeScaling.supportedTypes.contains(scaling.type) else {
            throw invalid(
                "rope_scaling.type", "'\(scaling.type)' is not supported (longrope, su, linear)")
        }
        for (field, value) in [
            ("factor", scaling.factor), ("attention_factor", scaling.attentionFactor),
            ("short_mscale", scaling.shortMscale), ("long_mscale", scaling.longMscale),
        ]
        where value.map({ !($0 > 0) || !$0.isFinite }) ?? false {
            throw invalid("rope_scaling.\(field)", "must be a positive number")
        }
        if scaling.isLongRope {
            // The attention factor divides by ln(original): at 1 it is infinite and the model
            // generated <unk> after passing verify. The original window also cannot exceed the
            // extended one it was extended to.
            let original = originalMaxPositionEmbeddings ?? 4096
            guard original >= 2, original <= maxPositionEmbeddings else {
                throw invalid(
                    "original_max_position_embeddings",
                    "is \(original); LongRoPE needs 2 to max_position_embeddings "
                        + "(\(maxPositionEmbeddings))")
            }
            // One divisor per rotary frequency pair: ropeDim/2 (48 on Phi-3.5 and Phi-4-mini).
            for (field, list) in [
                ("short_factor", scaling.shortFactor), ("long_factor", scaling.longFactor),
            ] {
                guard list.count == ropeDim / 2 else {
                    throw invalid(
                        "rope_scaling.\(field)",
                        "has \(list.count) entries, expected \(ropeDim / 2) (rotary dimension \(ropeDim) / 2)"
                    )
                }
                // Real factors lie between 1 and about 100; far outside, 1 / (factor × theta^e)
                // leaves float range and the angles become infinite or zero.
                if let bad = list.firstIndex(where: { !($0 >= 1e-3 && $0 <= 1e6) }) {
                    throw invalid(
                        "rope_scaling.\(field)",
                        "entry \(bad) (\(list[bad])) must be a number from 0.001 to 1e6")
                }
            }
        }
        if scaling.type == "linear" {
            guard let factor = scaling.factor else {
                throw .missingField(path: source, field: "rope_scaling.factor")
            }
            guard factor > 0, factor.isFinite else {
                throw invalid("rope_scaling.factor", "must be positive")
            }
        }
    }

    private func validate(_ q: QuantizationConfig) throws(ConfigError) {
        let key = quantization != nil ? "quantization" : "quantization_config"
        let layers =
            [(key, LayerQuantization.quantized(groupSize: q.groupSize, bits: q.bits, mode: q.mode))]
            + q.overrides.sorted { $0.key < $1.key }.map { ("\(key).\($0.key)", $0.value) }
        for (field, layer) in layers {
            guard case .quantized(let groupSize, let bits, let mode) = layer else { continue }
            if let m = MicroscaledMode(rawValue: mode) {
                guard bits == m.bits, groupSize == m.groupSize else {
                    throw invalid(
                        field,
                        "\(mode) is \(m.bits)-bit in groups of \(m.groupSize), got "
                            + "bits \(bits), group_size \(groupSize)")
                }
                continue
            }
            guard mode == "affine" else {
                throw invalid(
                    "\(field).mode",
                    "'\(mode)' is not supported (affine, mxfp4, nvfp4 or mxfp8)")
            }
            guard [2, 3, 4, 5, 6, 8].contains(bits) else {
                throw invalid("\(field).bits", "must be 2, 3, 4, 5, 6 or 8, got \(bits)")
            }
            guard [32, 64, 128].contains(groupSize) else {
                throw invalid("\(field).group_size", "must be 32, 64 or 128, got \(groupSize)")
            }
        }
    }

    private func invalid(_ field: String, _ detail: String) -> ConfigError {
        .invalidValue(path: source, field: field, detail: detail)
    }
}

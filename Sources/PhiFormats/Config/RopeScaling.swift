/// `rope_scaling` of a Phi-3 config. Phi-3.5 and Phi-4-mini use LongRoPE (`"longrope"`, older
/// files `"su"`): per-frequency divisors `short_factor` while the sequence fits in
/// `original_max_position_embeddings`, `long_factor` beyond. `"linear"` divides positions by
/// `factor`; Llama 3's `"llama3"` divides the low frequencies by `factor` and blends the middle
/// band (`low_freq_factor`, `high_freq_factor`, its own `original_max_position_embeddings`).
/// transformers spells the kind `type` or `rope_type`; both are read.
public struct RopeScaling: Sendable, Equatable, Decodable {
    /// `longrope`, `su`, `linear` or `default`, as written in the file.
    public var type: String
    /// One divisor per rotary frequency (ropeDim / 2 entries) for LongRoPE; empty otherwise.
    public var shortFactor: [Double]
    public var longFactor: [Double]
    /// `factor` for linear scaling (and informational for others).
    public var factor: Double?
    /// Explicit attention (magnitude) factor; when nil, LongRoPE uses
    /// `sqrt(1 + ln(max/orig) / ln(orig))`.
    public var attentionFactor: Double?
    /// phimoe's LongRoPE magnitudes (`short_mscale`, `long_mscale`): multiply cos and sin in
    /// place of the attention factor, the short one up to original_max_position_embeddings.
    public var shortMscale: Double?
    public var longMscale: Double?
    /// `llama3` only: the band edges and the context the model was trained at.
    public var lowFreqFactor: Double?
    public var highFreqFactor: Double?
    public var originalMaxPositionEmbeddings: Int?

    /// Kinds phikit implements.
    public static let supportedTypes: Set<String> = ["longrope", "su", "linear", "llama3", "default"]

    /// True for the LongRoPE kinds, which need both factor lists.
    public var isLongRope: Bool { type == "longrope" || type == "su" }

    public init(
        type: String, shortFactor: [Double] = [], longFactor: [Double] = [], factor: Double? = nil,
        attentionFactor: Double? = nil
    ) {
        self.type = type
        self.shortFactor = shortFactor
        self.longFactor = longFactor
        self.factor = factor
        self.attentionFactor = attentionFactor
    }

    enum CodingKeys: String, CodingKey {
        case type
        case ropeType = "rope_type"
        case shortFactor = "short_factor"
        case longFactor = "long_factor"
        case factor
        case attentionFactor = "attention_factor"
        case shortMscale = "short_mscale"
        case longMscale = "long_mscale"
        case lowFreqFactor = "low_freq_factor"
        case highFreqFactor = "high_freq_factor"
        case originalMaxPositionEmbeddings = "original_max_position_embeddings"
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard
            let type = try c.decodeIfPresent(String.self, forKey: .type)
                ?? c.decodeIfPresent(String.self, forKey: .ropeType)
        else {
            throw DecodingError.keyNotFound(
                CodingKeys.type, .init(codingPath: c.codingPath, debugDescription: "no rope type"))
        }
        self.type = type
        factor = try c.decodeIfPresent(Double.self, forKey: .factor)
        attentionFactor = try c.decodeIfPresent(Double.self, forKey: .attentionFactor)
        shortMscale = try c.decodeIfPresent(Double.self, forKey: .shortMscale)
        longMscale = try c.decodeIfPresent(Double.self, forKey: .longMscale)
        lowFreqFactor = try c.decodeIfPresent(Double.self, forKey: .lowFreqFactor)
        highFreqFactor = try c.decodeIfPresent(Double.self, forKey: .highFreqFactor)
        originalMaxPositionEmbeddings = try c.decodeIfPresent(
            Int.self, forKey: .originalMaxPositionEmbeddings)
        if type == "longrope" || type == "su" {
            // Both lists are required for LongRoPE (transformers checks the same); a missing
            // one is reported as `rope_scaling.short_factor` / `rope_scaling.long_factor`.
            shortFactor = try c.decode([Double].self, forKey: .shortFactor)
            longFactor = try c.decode([Double].self, forKey: .longFactor)
        } else {
            shortFactor = try c.decodeIfPresent([Double].self, forKey: .shortFactor) ?? []
            longFactor = try c.decodeIfPresent([Double].self, forKey: .longFactor) ?? []
        }
    }
}

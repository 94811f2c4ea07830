/// MLX affine quantization as `mlx_lm.convert -q` records it in config.json:
/// `"quantization": {"group_size": 64, "bits": 4, "mode": "affine",
///                   "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 6}, "lm_head": false}`.
/// Per-layer entries (mixed recipes, partly quantized sources) override the default.
public struct QuantizationConfig: Sendable, Equatable {
    public var groupSize: Int
    public var bits: Int
    /// `affine` unless stated (mlx-lm's default mode).
    public var mode: String
    /// Module path (`model.layers.3.mlp.down_proj`) → its own setting.
    public var overrides: [String: LayerQuantization]

    public init(
        groupSize: Int, bits: Int, mode: String = "affine",
        overrides: [String: LayerQuantization] = [:]
    ) {
        self.groupSize = groupSize
        self.bits = bits
        self.mode = mode
        self.overrides = overrides
    }

    /// How the module at `path` (no `.weight` suffix) is stored: its override, else the default.
    public func layer(_ path: String) -> LayerQuantization {
        overrides[path] ?? .quantized(groupSize: groupSize, bits: bits, mode: mode)
    }
}

public enum LayerQuantization: Sendable, Equatable {
    case quantized(groupSize: Int, bits: Int, mode: String)
    case notQuantized
}

extension QuantizationConfig: Decodable {
    /// Keys of the quantization object that are settings, not module paths.
    static let settingKeys: Set<String> = ["group_size", "bits", "mode", "quant_method"]

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ s: String) { stringValue = s }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private struct Layer: Decodable {
        var groupSize: Int?, bits: Int, mode: String?
        enum CodingKeys: String, CodingKey {
            case groupSize = "group_size"
            case bits, mode
        }
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        groupSize = try c.decode(Int.self, forKey: AnyKey("group_size"))
        bits = try c.decode(Int.self, forKey: AnyKey("bits"))
        mode = try c.decodeIfPresent(String.self, forKey: AnyKey("mode")) ?? "affine"
        overrides = [:]
        for key in c.allKeys where !Self.settingKeys.contains(key.stringValue) {
            if let flag = try? c.decode(Bool.self, forKey: key) {
                // `false` = left in float; `true` would just restate the default.
                if !flag { overrides[key.stringValue] = .notQuantized }
            } else if let layer = try? c.decode(Layer.self, forKey: key) {
                overrides[key.stringValue] = .quantized(
                    groupSize: layer.groupSize ?? groupSize, bits: layer.bits,
                    mode: layer.mode ?? mode)
            }
            // Anything else (unknown scalar settings) is ignored, as mlx-lm ignores it.
        }
    }

    /// Whether a `quantization_config` object is MLX's own copy rather than a transformers
    /// quantizer's (GPTQ/AWQ/bitsandbytes also say `bits`/`group_size` but add `quant_method`).
    static func looksLikeMLX(_ c: KeyedDecodingContainer<AnyKey>) -> Bool {
        c.contains(AnyKey("group_size")) && c.contains(AnyKey("bits"))
            && !c.contains(AnyKey("quant_method"))
    }
}

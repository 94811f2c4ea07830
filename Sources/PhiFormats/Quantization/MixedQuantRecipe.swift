/// mlx-lm's mixed-precision recipes (`mlx_lm.convert --quant-predicate mixed_3_6`): affine
/// quantization at a low bit width, with more bits for the layers that hurt most, chosen as
/// `mixed_quant_predicate_builder` in mlx_lm/convert.py does (after llama.cpp's Q4_K_M):
/// `v_proj` and `down_proj` of the first and last eighth of the layers and of every third
/// layer between, and `lm_head`. Phi-3 fuses `v_proj` into `qkv_proj`, so only `down_proj`
/// and `lm_head` go up there.
public enum MixedQuantRecipe: String, Sendable, CaseIterable, Hashable {
    case mixed_2_6, mixed_3_4, mixed_3_6, mixed_4_6

    public var lowBits: Int {
        switch self {
        case .mixed_2_6: 2
        case .mixed_3_4, .mixed_3_6: 3
        case .mixed_4_6: 4
        }
    }
    public var highBits: Int { self == .mixed_3_4 ? 4 : 6 }

    /// `mlx mixed 3/6`-style label.
    public var label: String { "mixed \(lowBits)/\(highBits)" }

    /// Bits for the module at `path` (`model.layers.3.mlp.down_proj`) of a model with
    /// `layerCount` layers. The layer index is the path component at the position of the
    /// first number in the first `down_proj` path (`layerIndexPosition`, 2 for
    /// `model.layers.N…`); a shorter path (embeddings, lm_head) counts as layer 0.
    public func bits(
        forModule path: String, layerCount n: Int, layerIndexPosition: Int = 2
    )
        -> Int
    {
        let parts = path.split(separator: ".", omittingEmptySubsequences: false)
        let index = parts.count > layerIndexPosition ? Int(parts[layerIndexPosition]) ?? 0 : 0
        let moreBits = index < n / 8 || index >= 7 * n / 8 || Self.mod(index - n / 8, 3) == 2
        let isV = path.contains("v_proj") || path.contains("v_a_proj") || path.contains("v_b_proj")
        if (isV || path.contains("down_proj")) && moreBits { return highBits }
        if path.contains("lm_head") { return highBits }
        return lowBits
    }

    /// Python's `%` (the sign of the divisor): `(index - n // 8) % 3` is never negative there.
    private static func mod(_ a: Int, _ b: Int) -> Int { ((a % b) + b) % b }
}

/// What one tensor of an MLX model counts for, the way mlx_lm's `get_total_parameters` counts:
/// a quantized layer `P` is stored as `P.weight` (uint32, packed), `P.scales` and `P.biases`;
/// the packed weight counts `elements × 32 / bits` parameters, its scales and biases none.
/// Shared by `ModelWeights.parameterCount` and `inspect`, so both always agree.
public struct PackedTensorCount: Sendable, Equatable {
    /// mlx's default group size; used to infer bits from shapes when no config says.
    public static let defaultGroupSize = 64

    public var parameters: Int
    /// Bits per value for a packed weight, nil for any other tensor.
    public var bits: Int?
    /// True when `bits` was inferred from the shapes (config.json did not say).
    public var bitsInferred: Bool

    /// Counts `info`, looking up its siblings (`P.scales`) through `tensor`. Bits come from
    /// `quantization` (per-layer override first), else from the shapes: packed columns × 32 =
    /// bits × groups × group size, with group size 64; else 4.
    public init(
        _ info: TensorInfo, quantization: QuantizationConfig?,
        tensor: (String) -> TensorInfo?
    ) {
        (parameters, bits, bitsInferred) = (info.elementCount, nil, false)
        guard let module = Self.modulePath(info.name), let scales = tensor(module + ".scales")
        else { return }
        switch info.name.dropFirst(module.count) {
        case ".scales", ".biases":
            parameters = 0
        case ".weight" where info.dtype == .u32:
            let bits: Int
            if let q = quantization, case .quantized(_, let configured, _) = q.layer(module),
                configured > 0
            {
                (bits, bitsInferred) = (configured, false)
            } else {
                (bits, bitsInferred) = (Self.inferredBits(weight: info, scales: scales) ?? 4, true)
            }
            self.bits = bits
            parameters = info.elementCount * 32 / bits
        default:
            break
        }
    }

    /// `a.b.weight` → `a.b`.
    public static func modulePath(_ tensor: String) -> String? {
        guard let dot = tensor.lastIndex(of: ".") else { return nil }
        return String(tensor[..<dot])
    }

    private static func inferredBits(weight: TensorInfo, scales: TensorInfo) -> Int? {
        guard let packed = weight.shape.last, let groups = scales.shape.last, groups > 0,
            (packed * 32) % (groups * defaultGroupSize) == 0
        else { return nil }
        let bits = packed * 32 / (groups * defaultGroupSize)
        return [2, 3, 4, 5, 6, 8].contains(bits) ? bits : nil
    }
}

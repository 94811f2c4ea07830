import Foundation
import PhiFormats

/// What `list` says about a model directory: its weight format (`mlx q4 g64`, `bf16`), its
/// parameter count, and why it cannot be loaded, if it cannot. Reads config.json and the
/// safetensors headers only (the weights are memory-mapped, never read).
struct ModelSummary: Sendable, Equatable {
    var format: String?
    var parameters: Int?
    /// Why the weights do not open (a missing shard, a truncated file), nil when they do.
    var weightsProblem: String?

    init(directory: String) {
        let quantization = Self.quantizationLabel(directory)
        do {
            let weights = try ModelWeights(directory: directory)
            parameters = weights.parameterCount
            format = quantization ?? Self.dominantFloat(weights).map(Self.shortName)
            weightsProblem = nil
        } catch let error as any UserFacingError {
            format = quantization
            parameters = nil
            weightsProblem = error.message
        } catch {
            format = quantization
            parameters = nil
            weightsProblem = "\(error)"
        }
    }

    /// `mlx q4 g64` from config.json's `quantization` (`mlx mxfp4`, `mlx mixed 3/6`), or the
    /// `quant_method` of a foreign `quantization_config` (`gptq`, `awq`…).
    static func quantizationLabel(_ directory: String) -> String? {
        guard let data = try? LocalFile.read(directory + "/config.json"),
            let config = try? JSONValue(parsing: Array(data))
        else { return nil }
        if let q = config["quantization"], let bits = q["bits"]?.intValue,
            let group = q["group_size"]?.intValue
        {
            let mode = q["mode"]?.stringValue ?? "affine"
            guard mode == "affine" else { return "mlx \(mode)" }
            // Per-layer entries of more than one width: a mixed recipe (`mlx mixed 3/6`).
            let layerBits = Set(
                (q.objectValue ?? []).compactMap { $0.value["bits"]?.intValue })
            if layerBits.count > 1, let lo = layerBits.min(), let hi = layerBits.max() {
                return "mlx mixed \(lo)/\(hi)"
            }
            return "mlx q\(bits) g\(group)"
        }
        return config["quantization_config"]?["quant_method"]?.stringValue
    }

    /// The float type holding most of the bytes.
    static func dominantFloat(_ weights: ModelWeights) -> DType? {
        var bytes: [DType: Int] = [:]
        for name in weights.tensorNames {
            guard let info = weights.tensor(name)?.info, info.dtype.isFloat else { continue }
            bytes[info.dtype, default: 0] += info.byteCount
        }
        return bytes.max { $0.value < $1.value }?.key
    }

    static func shortName(_ dtype: DType) -> String {
        switch dtype {
        case .bf16: "bf16"
        case .f16: "f16"
        case .f32: "f32"
        case .f64: "f64"
        default: dtype.rawValue.lowercased()
        }
    }
}

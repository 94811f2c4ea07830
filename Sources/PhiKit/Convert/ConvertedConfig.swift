import Foundation
import PhiFormats

/// The config.json a convert writes, byte for byte what mlx_lm writes:
/// 1. `load_config`: the source config.json, with `eos_token_id` replaced by
///    generation_config.json's when that one is truthy (an int or a non-empty list);
/// 2. `quantize_model`: `quantization = {"group_size", "bits", "mode"}` (a recipe adds one
///    such entry per quantized layer, keyed by module path, in module order) and an
///    identical `quantization_config` ("support hf model tree #957");
///    `--dequantize` pops both instead;
/// 3. `save_config`: drops `_name_or_path` and `vision_config`, copies `quantization` into
///    `quantization_config` when present, sorts the top-level keys (nested objects keep
///    their order) and writes `json.dump(indent=4)` (ASCII escapes, Python float repr,
///    non-finite floats tagged as `{"__float__": "Infinity"}`, no trailing newline).
/// Note that `--dtype` does not touch `torch_dtype`: mlx_lm leaves it as it was.
enum ConvertedConfig {
    static func bytes(
        source: JSONValue, generationConfig: JSONValue?, quantization: QuantizationScheme?,
        layers: [(key: String, value: JSONValue)] = [], dequantize: Bool
    ) -> [UInt8] {
        var config = source
        if let eos = generationConfig?["eos_token_id"], isTruthy(eos) {
            config.set("eos_token_id", eos)
        }
        if let q = quantization {
            let members = entry(q) + layers
            config.set("quantization", .object(members))
            config.set("quantization_config", .object(members))
        }
        if dequantize {
            config.set("quantization", nil)
            config.set("quantization_config", nil)
        }
        config.set("_name_or_path", nil)
        config.set("vision_config", nil)
        if let q = config["quantization"] { config.set("quantization_config", q) }
        return Array(tagNonFinite(config.sortedKeys()).pythonJSONDump(indent: 4).utf8)
    }

    /// `{"group_size", "bits", "mode"}`, the dict mlx-lm writes for the model and per layer.
    static func entry(_ q: QuantizationScheme) -> [(key: String, value: JSONValue)] {
        [("group_size", .int(q.groupSize)), ("bits", .int(q.bits)), ("mode", .string(q.mode))]
    }

    /// generation_config.json as mlx_lm reads it: absent or unparsable means "no override".
    static func readGenerationConfig(directory: String) -> JSONValue? {
        let path = (directory as NSString).appendingPathComponent("generation_config.json")
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try? JSONValue(parsing: data)
    }

    /// The cast mlx_lm.convert applies without `--dtype`: config's `torch_dtype`, else
    /// `text_config.dtype`, if it names one of the three conversion dtypes. (A top-level
    /// transformers-5 `dtype` key is not consulted, so such models keep their tensors' types.)
    static func defaultDType(_ config: JSONValue) -> DType? {
        let name =
            config["torch_dtype"].flatMap { $0.isNull ? nil : $0 }
            ?? config["text_config"]?["dtype"]
        switch name?.stringValue {
        case "float16": return .f16
        case "bfloat16": return .bf16
        case "float32": return .f32
        default: return nil
        }
    }

    /// Python truthiness of a JSON value (`if eos_token_id := …get("eos_token_id", False)`).
    static func isTruthy(_ v: JSONValue) -> Bool {
        switch v {
        case .null: false
        case .bool(let b): b
        case .number: (v.doubleValue ?? 1) != 0
        case .string(let s): !s.isEmpty
        case .array(let a): !a.isEmpty
        case .object(let o): !o.isEmpty
        }
    }

    /// mlx_lm's `_encode_tagged_floats`: a float that is not finite is written as
    /// `{"__float__": "NaN" | "Infinity" | "-Infinity"}` so the file stays valid JSON.
    static func tagNonFinite(_ v: JSONValue) -> JSONValue {
        switch v {
        case .number(let literal):
            let isInteger = literal.allSatisfy { $0.isASCII && ($0.isNumber || $0 == "-") }
            guard !isInteger, let d = v.doubleValue, !d.isFinite else { return v }
            let tag = d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity"
            return .object([("__float__", .string(tag))])
        case .array(let a): return .array(a.map(tagNonFinite))
        case .object(let o): return .object(o.map { ($0.key, tagNonFinite($0.value)) })
        default: return v
        }
    }
}

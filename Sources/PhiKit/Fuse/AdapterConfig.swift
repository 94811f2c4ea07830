import Foundation
import PhiFormats

/// adapter_config.json as `mlx_lm.lora` writes it and `mlx_lm.tuner.utils.load_adapters`
/// reads it: `fine_tune_type` (lora, the default, or dora), `num_layers` (how many of the last
/// layers are wrapped; 0 or negative: all, as Python's `layers[-max(n, 0):]`) and
/// `lora_parameters` with `rank`, `scale` and optional `keys` (module paths relative to a
/// layer, or of a top-level module such as `lm_head`).
struct AdapterConfig: Equatable {
    enum Kind: String { case lora, dora }

    var kind: Kind
    var numLayers: Int
    var rank: Int
    var scale: Double
    var keys: [String]?

    static let fileName = "adapter_config.json"

    static func load(directory: String) throws -> AdapterConfig {
        let path = directory + "/" + fileName
        guard let data = FileManager.default.contents(atPath: path) else {
            throw FuseError.adapterMissing(path: path)
        }
        let json: JSONValue
        do { json = try JSONValue(parsing: data) } catch {
            throw FuseError.badAdapterConfig(path: path, detail: "not valid JSON (\(error))")
        }
        return try parse(json, path: path)
    }

    static func parse(_ json: JSONValue, path: String) throws -> AdapterConfig {
        func bad(_ detail: String, _ hint: String? = nil) -> FuseError {
            .badAdapterConfig(path: path, detail: detail, hint: hint)
        }
        let typeName = json["fine_tune_type"]?.stringValue ?? "lora"
        guard let kind = Kind(rawValue: typeName) else {
            throw bad(
                "fine_tune_type '\(typeName)' cannot be fused",
                typeName == "full"
                    ? "a full fine-tune is a complete model: load it directly" : "use lora or dora")
        }
        guard let numLayers = json["num_layers"]?.intValue else {
            throw bad("num_layers is missing or not an integer")
        }
        guard let params = json["lora_parameters"], params.objectValue != nil else {
            throw bad("lora_parameters is missing")
        }
        guard let rank = params["rank"]?.intValue, rank > 0 else {
            throw bad("lora_parameters.rank is missing or not a positive integer")
        }
        guard let scale = params["scale"]?.doubleValue else {
            throw bad(
                "lora_parameters.scale is missing or not a number",
                params["alpha"] != nil
                    ? "mlx-lm's LoRA config uses 'scale', not 'alpha' (see mlx-lm's LORA.md)" : nil)
        }
        var keys: [String]?
        if let k = params["keys"], !k.isNull {
            guard let list = k.arrayValue?.compactMap(\.stringValue),
                list.count == k.arrayValue?.count
            else { throw bad("lora_parameters.keys is not a list of module paths") }
            keys = list
        }
        return AdapterConfig(kind: kind, numLayers: numLayers, rank: rank, scale: scale, keys: keys)
    }
}

import Foundation
import PhiFormats

/// config.json's `model_type` → the code that loads it (mlx-swift-lm's `ModelTypeRegistry`).
/// Adding an architecture: a schema in PhiFormats/Architectures, a folder under Models/, and
/// one line here.
public enum ModelArchitectures {
    public typealias Loader = @Sendable (_ directory: String, _ threads: Int?) throws ->
        any CausalLanguageModel

    static let loaders: [String: Loader] = [
        "phi3": { try Phi3Model.load(directory: $0, threads: $1) },
        "phi": { try PhiModel.load(directory: $0, threads: $1) },
        "phimoe": { try PhiMoEModel.load(directory: $0, threads: $1) },
    ]

    /// The `model_type`s this engine runs, sorted.
    public static var supportedTypes: [String] { loaders.keys.sorted() }

    /// Loads the model in `directory` with the loader its config.json's `model_type` names;
    /// a type without one is refused (`ConfigError`), before any weight is mapped.
    public static func load(directory: String, threads: Int? = nil) throws
        -> any CausalLanguageModel
    {
        let path = (directory as NSString).appendingPathComponent("config.json")
        // A config.json that cannot be read or has no model_type is explained by the loader's
        // own config validation (the one place that words config errors), so try phi3's.
        let type =
            FileManager.default.contents(atPath: path)
            .flatMap { try? JSONValue(parsing: $0) }?["model_type"]?.stringValue ?? "phi3"
        guard let loader = loaders[type] else {
            throw ConfigError.unsupportedArchitecture(path: path, modelType: type)
        }
        return try loader(directory, threads)
    }
}

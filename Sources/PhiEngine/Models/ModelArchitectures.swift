import Foundation
import PhiFormats

/// config.json's `model_type` → the model class that runs it. The registry is
/// `Architectures.all` (PhiFormats): each model folder declares its schema `RunnableSchema`,
/// naming its class, so adding an architecture touches its schema file, its model folder and
/// one line of `Architectures.all`.
public enum ModelArchitectures {
    /// The `model_type`s this engine runs, sorted.
    public static var supportedTypes: [String] {
        Architectures.all.filter { $0 is any RunnableSchema }.map(\.modelType).sorted()
    }

    /// Loads the model in `directory`: config.json is read and validated once (a `model_type`
    /// without a schema is a `ConfigError`), then the class its schema names maps the
    /// weights.
    /// `adapters`: LoRA/DoRA fine-tunes applied at run time (`LowRankDelta`), each by its
    /// index, to the sessions that select it (`InferenceSession.adapter`).
    /// `placement`: how a dense model's weight files are held (nil: mapped in 2 MiB pages;
    /// `serve` asks for `.resident`); `cancellation` stops a resident copy's reads
    /// (`Interrupted`).
    public static func load(
        directory: String, threads: Int? = nil, adapters: [LowRankAdapters] = [],
        placement: WeightPlacement? = nil, cancellation: CancellationToken? = nil
    ) throws -> any CausalLanguageModel {
        let config = try ModelConfig.load(directory: directory)
        guard let schema = Architectures.schema(for: config.modelType) as? any RunnableSchema else {
            throw ConfigError.unsupportedArchitecture(path: config.source, modelType: config.modelType)
        }
        return try schema.loadModel(
            directory: directory, config: config, threads: threads, adapters: adapters,
            placement: placement, cancellation: cancellation)
    }
}

import PhiEngine
import PhiKit

/// The generation flags `run` and `chat` share, read before the positionals and checked
/// after `finish()`, so an unknown option is reported first. They only map flags to
/// `GenerationSettings`; what a flag left out comes from the model and the command
/// (`ModelContainer.parameters(_:for:)`), and the rules are `GenerationParameters.validate`'s.
struct SamplingFlags {
    var settings = GenerationSettings()

    /// Each field by the flag that sets it, for error messages.
    static let names: [GenerationParameters.Field: String] = [
        .maxTokens: "--max-tokens", .temperature: "--temp", .topP: "--top-p", .topK: "--top-k",
        .minP: "--min-p", .repetitionPenalty: "--repetition-penalty",
        .repetitionContextSize: "--repetition-context-size",
        .presencePenalty: "--presence-penalty", .frequencyPenalty: "--frequency-penalty",
    ]

    init(_ args: inout ArgumentReader) throws {
        settings.maxTokens = try args.option("-m", "--max-tokens", "-n", as: Int.self)
        settings.temperature = try args.option("--temp", "--temperature", as: Double.self)
            .map(Float.init)
        settings.topP = try args.option("--top-p", as: Double.self).map(Float.init)
        settings.topK = try args.option("--top-k", as: Int.self)
        settings.minP = try args.option("--min-p", as: Double.self).map(Float.init)
        settings.repetitionPenalty = try args.option("--repetition-penalty", as: Double.self)
            .map(Float.init)
        settings.repetitionContextSize = try args.option(
            "--repetition-context-size", as: Int.self)
        settings.presencePenalty = try args.option("--presence-penalty", as: Double.self)
            .map(Float.init)
        settings.frequencyPenalty = try args.option("--frequency-penalty", as: Double.self)
            .map(Float.init)
        settings.seed = try args.option("--seed", as: Int.self).map {
            UInt64(bitPattern: Int64($0))
        }
    }

    /// The settings, checked (before any model is loaded).
    func checked() throws(UsageError) -> GenerationSettings {
        do {
            try settings.validate(naming: Self.names)
        } catch {
            throw UsageError(error.message)
        }
        return settings
    }
}

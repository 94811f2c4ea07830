import PhiEngine
import PhiKit

/// The generation flags `run` and `chat` share, read before the positionals and checked
/// after `finish()`, so an unknown option is reported first. A table from flags to
/// `GenerationParameters.Field`s: what a flag left out comes from the model and the command
/// (`ModelContainer.parameters(_:for:)`), and the rules are `GenerationParameters.validate`'s.
struct SamplingFlags {
    typealias Field = GenerationParameters.Field

    /// Each field's flags; the first `--` one names it in errors.
    static let table: [(flags: [String], field: Field)] = [
        (["-m", "--max-tokens", "-n"], .maxTokens), (["--temp", "--temperature"], .temperature),
        (["--top-p"], .topP), (["--top-k"], .topK), (["--min-p"], .minP),
        (["--repetition-penalty"], .repetitionPenalty),
        (["--repetition-context-size"], .repetitionContextSize),
        (["--presence-penalty"], .presencePenalty), (["--frequency-penalty"], .frequencyPenalty),
        (["--seed"], .seed),
    ]

    static let names = Dictionary(
        uniqueKeysWithValues: table.map { entry in
            (entry.field, entry.flags.first { $0.hasPrefix("--") } ?? entry.flags[0])
        })

    var settings = GenerationSettings()

    init(_ args: inout ArgumentReader) throws {
        for (flags, field) in Self.table {
            settings[field] =
                field.isInteger
                ? try args.option(flags, as: Int.self).map(GenerationParameters.Value.integer)
                : try args.option(flags, as: Double.self).map(GenerationParameters.Value.number)
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

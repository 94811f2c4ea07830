import PhiEngine

/// The sampling flags `run` and `chat` share (`--temp` and `-m` aside: their defaults differ),
/// read before the positionals and checked after `finish()`, so an unknown option is
/// reported first.
struct SamplingFlags {
    var topP: Double
    var topK: Int
    var minP: Double
    var penalty: Double?
    var penaltyContext: Int
    var seed: Int?

    init(_ args: inout ArgumentReader) throws {
        topP = try args.option("--top-p", as: Double.self) ?? 1
        topK = try args.option("--top-k", as: Int.self) ?? 0
        minP = try args.option("--min-p", as: Double.self) ?? 0
        penalty = try args.option("--repetition-penalty", as: Double.self)
        penaltyContext = try args.option("--repetition-context-size", as: Int.self) ?? 20
        seed = try args.option("--seed", as: Int.self)
    }

    /// The parameters these flags give (greedy, 256 tokens, until the caller sets those).
    func parameters() throws(UsageError) -> GenerationParameters {
        guard topP > 0, topP <= 1 else { throw UsageError("--top-p must be in (0, 1]") }
        guard topK >= 0 else { throw UsageError("--top-k must not be negative") }
        guard minP >= 0, minP <= 1 else { throw UsageError("--min-p must be in [0, 1]") }
        if let penalty, penalty <= 0 {
            throw UsageError("--repetition-penalty must be positive")
        }
        guard penaltyContext >= 0 else {
            throw UsageError("--repetition-context-size must not be negative")
        }
        return GenerationParameters(
            temperature: 0, topP: Float(topP), topK: topK, minP: Float(minP),
            repetitionPenalty: penalty.map(Float.init), repetitionContextSize: penaltyContext,
            seed: seed.map { UInt64(bitPattern: Int64($0)) })
    }
}

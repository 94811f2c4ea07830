import PhiFormats

/// How to pick tokens and when to stop, as mlx-lm's `make_sampler` /
/// `make_logits_processors` and MLX Swift's `GenerateParameters` name them.
public struct GenerationParameters: Sendable, Equatable {
    /// Stop after this many generated tokens.
    public var maxTokens: Int
    /// 0 picks the most likely token (greedy); otherwise logits are divided by it.
    public var temperature: Float
    /// Nucleus sampling: keep the most likely tokens whose mass reaches `topP` (1: off).
    public var topP: Float
    /// Keep the `topK` most likely tokens (0: off).
    public var topK: Int
    /// Keep tokens at least `minP` times as likely as the best one (0: off).
    public var minP: Float
    /// Divides positive logits of recently seen tokens and multiplies negative ones
    /// (1 or nil: off).
    public var repetitionPenalty: Float?
    /// How many of the latest tokens (prompt included) the penalty looks at.
    public var repetitionContextSize: Int
    /// OpenAI's presence penalty: subtracted once from the logit of every token generated so
    /// far (the prompt does not count). 0: off; negative values favour repeats.
    public var presencePenalty: Float
    /// OpenAI's frequency penalty: subtracted from a token's logit once per time it was
    /// generated so far. 0: off.
    public var frequencyPenalty: Float
    /// Same seed, same parameters, same prompt: the same tokens. nil: a fresh seed.
    public var seed: UInt64?
    /// Keep going through end tokens (benchmarks need exactly `maxTokens` tokens).
    public var ignoreEOS: Bool

    public init(
        maxTokens: Int = 256, temperature: Float = 0.6, topP: Float = 1, topK: Int = 0,
        minP: Float = 0, repetitionPenalty: Float? = nil, repetitionContextSize: Int = 20,
        presencePenalty: Float = 0, frequencyPenalty: Float = 0, seed: UInt64? = nil,
        ignoreEOS: Bool = false
    ) {
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        self.minP = minP
        self.repetitionPenalty = repetitionPenalty
        self.repetitionContextSize = repetitionContextSize
        self.presencePenalty = presencePenalty
        self.frequencyPenalty = frequencyPenalty
        self.seed = seed
        self.ignoreEOS = ignoreEOS
    }

    /// Greedy decoding of `maxTokens` tokens.
    public static func greedy(maxTokens: Int) -> GenerationParameters {
        GenerationParameters(maxTokens: maxTokens, temperature: 0)
    }

    /// The fields a caller sets by name (a flag, a `/set` name, a JSON key): each front end
    /// keeps a table from its names to these, and nothing else per field.
    public enum Field: String, CaseIterable, Sendable {
        case maxTokens, temperature, topP, topK, minP, repetitionPenalty
        case repetitionContextSize, presencePenalty, frequencyPenalty, seed

        /// Whether the field takes whole numbers (else any number).
        public var isInteger: Bool {
            switch self {
            case .maxTokens, .topK, .repetitionContextSize, .seed: true
            default: false
            }
        }
    }

    /// A value as a caller gives it: a whole number (`isInteger` fields) or any number.
    public enum Value: Sendable, Equatable {
        case integer(Int)
        case number(Double)

        var number: Double {
            switch self {
            case .integer(let i): Double(i)
            case .number(let d): d
            }
        }

        var integer: Int {
            switch self {
            case .integer(let i): i
            case .number(let d): Int(exactly: d.rounded(.towardZero)) ?? (d < 0 ? .min : .max)
            }
        }
    }

    /// Sets `field` to `value` (a seed's bits are those of the signed integer given).
    public mutating func set(_ field: Field, _ value: Value) {
        switch field {
        case .maxTokens: maxTokens = value.integer
        case .temperature: temperature = Float(value.number)
        case .topP: topP = Float(value.number)
        case .topK: topK = value.integer
        case .minP: minP = Float(value.number)
        case .repetitionPenalty: repetitionPenalty = Float(value.number)
        case .repetitionContextSize: repetitionContextSize = value.integer
        case .presencePenalty: presencePenalty = Float(value.number)
        case .frequencyPenalty: frequencyPenalty = Float(value.number)
        case .seed: seed = UInt64(bitPattern: Int64(value.integer))
        }
    }

    /// Throws for values no sampler can use — the one set of rules for run, chat, serve and
    /// apps. The error names the field as `names` spells it (a flag, a `/set` name, a JSON
    /// key); fields not in `names` go by their Swift name.
    public func validate(naming names: [Field: String] = [:]) throws(GenerationError) {
        func check(_ ok: Bool, _ field: Field, _ rule: String) throws(GenerationError) {
            if !ok { throw .invalidParameter(name: names[field] ?? field.rawValue, rule: rule) }
        }
        try check(maxTokens >= 1, .maxTokens, "must be at least 1")
        try check(temperature >= 0 && temperature.isFinite, .temperature, "must not be negative")
        try check(topP > 0 && topP <= 1, .topP, "must be in (0, 1]")
        try check(topK >= 0, .topK, "must not be negative")
        try check(minP >= 0 && minP <= 1, .minP, "must be in [0, 1]")
        if let penalty = repetitionPenalty {
            try check(penalty > 0 && penalty.isFinite, .repetitionPenalty, "must be positive")
        }
        try check(repetitionContextSize >= 0, .repetitionContextSize, "must not be negative")
        // OpenAI's range for both.
        try check(abs(presencePenalty) <= 2, .presencePenalty, "must be in [-2, 2]")
        try check(abs(frequencyPenalty) <= 2, .frequencyPenalty, "must be in [-2, 2]")
    }
}

public enum GenerationError: UserFacingError, Equatable {
    case invalidParameter(name: String, rule: String)
    /// The model's logits are NaN where a token had to be chosen (broken weights).
    case logitsNotANumber(generated: Int)

    public var message: String {
        switch self {
        case .invalidParameter(let name, let rule): "\(name) \(rule)"
        case .logitsNotANumber(let generated):
            "the model's logits are not numbers (NaN) after \(generated) generated tokens"
        }
    }

    public var hint: String? {
        switch self {
        case .invalidParameter: nil
        case .logitsNotANumber: "the weights are damaged: try phikit verify on the model"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .invalidParameter: .usage
        case .logitsNotANumber: .dataError
        }
    }
}

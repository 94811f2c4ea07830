import PhiEngine
import PhiFormats
import PhiHub

/// The generation settings a caller gave — `run`/`chat` flags, chat's `/set`, a server
/// request — before defaults: nil is "not said". Front ends only map their names to these
/// fields; `ModelContainer.parameters(_:for:)` fills in the rest, in one order for all:
///
///     flag / request  >  registry entry  >  generation_config.json  >  built-in
public struct GenerationSettings: Sendable, Equatable {
    public typealias Field = GenerationParameters.Field
    public typealias Value = GenerationParameters.Value

    /// The fields that were said.
    public var values: [Field: Value] = [:]
    /// Keep going through end tokens (`--ignore-eos`).
    public var ignoreEOS = false

    public init() {}

    public subscript(field: Field) -> Value? {
        get { values[field] }
        set { values[field] = newValue }
    }

    /// `base` with every field that was said replaced.
    public func applied(to base: GenerationParameters) -> GenerationParameters {
        var p = base
        for (field, value) in values { p.set(field, value) }
        if ignoreEOS { p.ignoreEOS = true }
        return p
    }

    /// Checks what was said (before any model is loaded), naming each field as `names`
    /// spells it: `GenerationParameters.validate`'s rules, the only ones.
    public func validate(naming names: [Field: String]) throws(GenerationError) {
        try applied(to: GenerationParameters()).validate(naming: names)
    }
}

/// Which front end asks: each has its own built-in defaults, the last resort.
public enum GenerationFrontEnd: Sendable {
    /// `phikit run`: greedy, 256 tokens (mlx_lm.generate's defaults: a run repeats).
    case run
    /// `phikit chat` and `ChatSession`: temperature 0.6, 1024 tokens (the MLX Swift chat app).
    case chat
    /// `phikit serve`: OpenAI's temperature 1; the length is the request's (see
    /// `CompletionHandler`), else what the context leaves.
    case serve

    var builtIn: GenerationParameters {
        switch self {
        case .run: GenerationParameters(maxTokens: 256, temperature: 0)
        case .chat: GenerationParameters(maxTokens: 1024, temperature: 0.6)
        case .serve: GenerationParameters(maxTokens: Int(Int32.max), temperature: 1)
        }
    }
}

extension ModelContainer {
    /// `maxContext` if given, else the model's positions capped at
    /// `InferenceSession.defaultContextLimit`.
    public func defaultContext(_ maxContext: Int? = nil) -> Int {
        maxContext ?? min(model.maxPositions, InferenceSession.defaultContextLimit)
    }

    /// The parameters `settings` give for this model in `frontEnd`: each field from the
    /// first that says it of
    /// 1. `settings` (the flag, `/set`, the request);
    /// 2. the registry entry's `defaultTemperature` (chat and serve) and `defaultMaxTokens`
    ///    (chat) — settings of the chat apps, so `run` stays greedy and reproducible;
    /// 3. generation_config.json, as transformers reads it: when it names `do_sample`,
    ///    `temperature`, `top_p` or `top_k`, sampling is on only with `do_sample: true`
    ///    (then temperature, top_p and top_k default to 1, 1 and 50) and greedy otherwise;
    /// 4. the front end's built-in defaults (`GenerationFrontEnd`).
    public func parameters(
        _ settings: GenerationSettings, for frontEnd: GenerationFrontEnd
    ) -> GenerationParameters {
        var p = frontEnd.builtIn
        if let config = model.generationConfig { Self.apply(config, to: &p) }
        if frontEnd != .run, let entry = location.entry {
            if let t = entry.defaultTemperature { p.temperature = Float(t) }
            if frontEnd == .chat, let m = entry.defaultMaxTokens { p.maxTokens = m }
        }
        return settings.applied(to: p)
    }

    /// transformers' reading of generation_config.json's sampling fields.
    static func apply(_ config: GenerationConfig, to p: inout GenerationParameters) {
        guard config.doSample != nil || config.temperature != nil || config.topP != nil
            || config.topK != nil
        else { return }
        guard config.doSample == true else {
            p.temperature = 0
            return
        }
        p.temperature = Float(config.temperature ?? 1)
        p.topP = Float(config.topP ?? 1)
        p.topK = config.topK ?? 50
    }
}

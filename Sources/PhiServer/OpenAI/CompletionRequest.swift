import PhiEngine
import PhiFormats
import PhiKit

/// A `POST /v1/chat/completions` or `/v1/completions` body, checked: every field the server
/// uses, with its type and range; anything it cannot honour is a 400, never ignored.
struct CompletionRequest {
    enum Endpoint: Sendable { case chat, completions }

    enum Input {
        /// Messages as JSON objects (passed to the chat template as they are, after the
        /// content parts are joined), and the `tools` definitions.
        case chat(messages: [JSONValue], tools: [JSONValue])
        case text(String)
        case tokens([Int])
    }

    /// What `tool_choice` asks of the model (chat with tools only).
    enum ToolChoice: Equatable {
        /// The model is not offered the tools: it answers in text.
        case none
        /// The model decides (OpenAI's default when tools are given).
        case auto
        /// The answer must be a call: it starts with the model's tool-call tag.
        case required
        /// The answer must be a call of this function: it starts with the tag and the name.
        case function(String)

    }

    var endpoint: Endpoint
    /// The prompts: one for chat; one or more for completions (a list of prompts).
    var inputs: [Input]
    var input: Input { inputs[0] }
    var toolChoice: ToolChoice = .none
    /// `parallel_tool_calls` (OpenAI's default true): false keeps only the answer's first call.
    var parallelToolCalls = true
    /// `/v1/completions` `echo`: the answer starts with the prompt.
    var echo = false
    var model: String?
    /// `"adapter"`: the name of a run-time adapter the server loaded (`serve --adapter`).
    var adapter: String?
    var stream: Bool
    var includeUsage: Bool
    /// `max_tokens` / `max_completion_tokens`; nil: until the context is full (chat) or 16
    /// (completions, as OpenAI). More than the context leaves ends at the context
    /// (`"length"`), as llama-server and ollama do.
    var maxTokens: Int?
    /// The sampling fields given (nil: the model's default, see
    /// `ModelContainer.parameters(_:for:)`), checked by `GenerationParameters.validate`.
    var settings = GenerationSettings()
    /// `maxTokens` is only a bound (Anthropic's `max_tokens`, which its clients set far above
    /// a small model's context): the answer then ends at the context's end, with the same
    /// finish reason, instead of the request being refused.
    var maxTokensIsBound = false
    var stop: [String]
    /// `n`: how many choices to generate (choice i seeded with `seed + i`).
    var choices = 1
    /// Alternatives per token (0...10); nil: no log-probabilities.
    var logprobs: Int?
    /// `response_format` / `json_schema` / `grammar`, compiled: every answer follows it.
    var answerGrammar: Grammar?

    /// The sampling fields by their JSON keys (`max_tokens` apart: two keys, and the context
    /// caps it).
    static let fields: [(key: String, field: GenerationParameters.Field)] = [
        ("temperature", .temperature), ("top_p", .topP), ("top_k", .topK), ("min_p", .minP),
        ("repetition_penalty", .repetitionPenalty), ("presence_penalty", .presencePenalty),
        ("frequency_penalty", .frequencyPenalty), ("seed", .seed),
    ]

    /// Each field by its JSON key, for error messages.
    static let names = Dictionary(
        uniqueKeysWithValues: fields.map { ($0.field, $0.key) } + [(.maxTokens, "max_tokens")])

    static let int32 = 1...Int(Int32.max)
    /// `n` at most: each choice takes a slot of its own.
    static let maxChoices = 16

    init(_ endpoint: Endpoint, body: [UInt8]) throws(APIError) {
        let f = try RequestFields(body: body)
        self.endpoint = endpoint
        model = try f.string("model")
        adapter = try f.string("adapter")
        stream = try f.bool("stream") ?? false
        includeUsage = try f.object("stream_options")?.bool("include_usage") ?? false
        let maxCompletion = try f.int("max_completion_tokens", in: Self.int32)
        let maxTokensField = try f.int("max_tokens", in: Self.int32)
        maxTokens = maxCompletion ?? maxTokensField
        settings[.maxTokens] = maxTokens.map(GenerationParameters.Value.integer)
        // OpenAI's documented range; larger values are refused there too.
        _ = try f.number("temperature", in: 0...2)
        for (key, field) in Self.fields {
            settings[field] =
                field.isInteger
                ? try f.int(key).map(GenerationParameters.Value.integer)
                : try f.number(key).map(GenerationParameters.Value.number)
        }
        if settings[.topK] == .integer(-1) { settings[.topK] = .integer(0) }  // -1: off, as vLLM
        do throws(GenerationError) {
            try settings.validate(naming: Self.names)
        } catch {
            guard case .invalidParameter(let name, let rule) = error else {
                throw .invalidRequest(error.message)
            }
            throw .invalidRequest("'\(name)' \(rule)", param: name, code: "invalid_value")
        }
        stop = try Self.stop(f)
        choices = try f.int("n", in: 1...Self.maxChoices) ?? 1
        try Self.refuseUnsupported(f)
        answerGrammar = try RequestedFormat.read(f)
        switch endpoint {
        case .chat:
            let messages = try Self.messages(f)
            let listed = try Self.tools(f)
            toolChoice = try Self.toolChoice(f, tools: listed)
            parallelToolCalls = try f.bool("parallel_tool_calls") ?? true
            inputs = [.chat(messages: messages, tools: toolChoice == .none ? [] : listed)]
            let top = try f.int("top_logprobs", in: 0...10)
            let wanted = try f.bool("logprobs") ?? false
            logprobs = wanted ? top ?? 0 : nil
            if top != nil && logprobs == nil {
                throw .invalidRequest(
                    "'top_logprobs' needs 'logprobs': true", param: "top_logprobs",
                    code: "invalid_value")
            }
        case .completions:
            inputs = try Self.prompts(f)
            logprobs = try f.int("logprobs", in: 0...10)
            echo = try f.bool("echo") ?? false
            if echo && logprobs != nil {
                // OpenAI then scores the prompt's tokens too; the engine keeps only the
                // logits of a prompt's last position.
                throw .invalidRequest(
                    "'echo' with 'logprobs' is not supported: this server does not score the "
                        + "prompt's tokens", param: "echo", code: "unsupported_value")
            }
            // Insertion between a prompt and a suffix needs fill-in-the-middle tokens, which
            // Phi models do not have (llama-server refuses it too).
            if let suffix = try f.string("suffix"), !suffix.isEmpty {
                throw .invalidRequest(
                    "'suffix' is not supported: Phi models have no fill-in-the-middle tokens "
                        + "to insert text before a suffix", param: "suffix",
                    code: "unsupported_value")
            }
        }
        guard answerCount <= Self.maxChoices else {
            throw .invalidRequest(
                "\(inputs.count) prompts × n \(choices) is \(answerCount) answers; at most "
                    + "\(Self.maxChoices) per request", param: "n", code: "invalid_value")
        }
    }

    /// Answers the request asks for: `n` per prompt.
    var answerCount: Int { inputs.count * choices }

    /// Fields that would change the answer in ways this server cannot: a 400 naming them
    /// rather than an answer that silently ignores them. Their neutral values pass.
    private static func refuseUnsupported(_ f: RequestFields) throws(APIError) {
        if let bias = try f.object("logit_bias"), bias.object.objectValue?.isEmpty == false {
            throw .invalidRequest(
                "'logit_bias' is not supported", param: "logit_bias", code: "unsupported_value")
        }
        if let bestOf = try f.int("best_of"), bestOf != 1 {
            throw .invalidRequest(
                "'best_of' must be 1: this server returns one choice per request",
                param: "best_of", code: "unsupported_value")
        }
        for legacy in ["functions", "function_call"] where f.value(legacy) != nil {
            throw .invalidRequest(
                "'\(legacy)' is the deprecated form of 'tools' and 'tool_choice': use those",
                param: legacy, code: "unsupported_value")
        }
    }

    /// `stop`: a string or a list of up to 16 non-empty strings.
    static func stop(_ f: RequestFields) throws(APIError) -> [String] {
        guard let value = f.value("stop") else { return [] }
        let list: [String]
        if let single = value.stringValue {
            list = [single]
        } else if let array = value.arrayValue {
            list = try array.map { (item: JSONValue) throws(APIError) -> String in
                guard let s = item.stringValue else {
                    throw .invalidType("stop", expected: "a string or a list of strings")
                }
                return s
            }
        } else {
            throw .invalidType("stop", expected: "a string or a list of strings")
        }
        guard list.count <= 16 else {
            throw .invalidRequest("'stop' takes at most 16 strings", param: "stop")
        }
        return list.filter { !$0.isEmpty }
    }

    /// `messages`: objects with a string `role`; `content` a string, a list of text parts
    /// (joined), or null.
    private static func messages(_ f: RequestFields) throws(APIError) -> [JSONValue] {
        guard let messages = try f.array("messages"), !messages.isEmpty else {
            throw .invalidRequest(
                "'messages' must be a non-empty list of messages", param: "messages")
        }
        var result: [JSONValue] = []
        for m in try RequestFields.objects(messages, in: "messages") {
            guard try m.string("role") != nil else {
                throw .invalidRequest("'\(m.path).role' is missing", param: m.name("role"))
            }
            var copy = m.object
            if let content = m.value("content"), content.stringValue == nil {
                copy.set("content", .string(try content.joinedText(m.name("content"), partTypes: ["text"])))
            }
            result.append(copy)
        }
        return result
    }

    /// `tool_choice`: "none", "auto", "required" or `{"type": "function", "function":
    /// {"name": …}}` naming one of `tools`; as OpenAI, "none" without tools, "auto" with.
    private static func toolChoice(_ f: RequestFields, tools: [JSONValue]) throws(APIError)
        -> ToolChoice
    {
        let param = "tool_choice"
        guard let value = f.value(param) else { return tools.isEmpty ? .none : .auto }
        let choice: ToolChoice
        if let word = value.stringValue {
            switch word {
            case "none": choice = .none
            case "auto": choice = .auto
            case "required": choice = .required
            default:
                throw .invalidRequest(
                    "'tool_choice' must be \"none\", \"auto\", \"required\" or "
                        + "{\"type\": \"function\", \"function\": {\"name\": …}}, not \"\(word)\"",
                    param: param, code: "invalid_value")
            }
        } else if value["type"]?.stringValue == "function",
            let name = value["function"]?["name"]?.stringValue
        {
            guard tools.contains(where: { $0["function"]?["name"]?.stringValue == name }) else {
                throw .invalidRequest(
                    "'tool_choice' names the function '\(name)', which is not in 'tools'",
                    param: param, code: "invalid_value")
            }
            choice = .function(name)
        } else {
            throw .invalidType(
                param,
                expected: "\"none\", \"auto\", \"required\" or {\"type\": \"function\", "
                    + "\"function\": {\"name\": …}}")
        }
        if tools.isEmpty && choice != .none && choice != .auto {
            throw .invalidRequest(
                "'tool_choice' \(word(choice)) needs 'tools'", param: param, code: "invalid_value")
        }
        return choice
    }

    private static func word(_ choice: ToolChoice) -> String {
        switch choice {
        case .none: "\"none\""
        case .auto: "\"auto\""
        case .required: "\"required\""
        case .function(let name): "naming '\(name)'"
        }
    }

    /// `tools`: `{"type": "function", "function": {"name": …, …}}` objects.
    private static func tools(_ f: RequestFields) throws(APIError) -> [JSONValue] {
        guard let tools = try f.array("tools") else { return [] }
        for (i, tool) in tools.enumerated() {
            let name = "tools[\(i)]"
            guard tool["type"]?.stringValue == "function",
                tool["function"]?["name"]?.stringValue?.isEmpty == false
            else {
                throw .invalidRequest(
                    "'\(name)' must be {\"type\": \"function\", \"function\": {\"name\": …}}",
                    param: name)
            }
        }
        return tools
    }

    /// `prompt`: a string, a list of token ids, or a list of either (several prompts).
    private static func prompts(_ f: RequestFields) throws(APIError) -> [Input] {
        guard let value = f.value("prompt") else {
            throw .invalidRequest("'prompt' is missing", param: "prompt")
        }
        if let text = value.stringValue { return [.text(text)] }
        let expected = "a string, a list of token ids, or a list of those"
        guard let list = value.arrayValue, !list.isEmpty else {
            throw .invalidType("prompt", expected: expected)
        }
        let ids = list.compactMap(\.intValue)
        if ids.count == list.count { return [.tokens(ids)] }
        let prompts = try list.map { (item: JSONValue) throws(APIError) -> Input in
            if let text = item.stringValue { return .text(text) }
            if let items = item.arrayValue, !items.isEmpty {
                let ids = items.compactMap(\.intValue)
                if ids.count == items.count { return .tokens(ids) }
            }
            throw .invalidType("prompt", expected: expected)
        }
        guard prompts.count <= maxChoices else {
            throw .invalidRequest(
                "'prompt' holds \(prompts.count) prompts; at most \(maxChoices) per request",
                param: "prompt", code: "invalid_value")
        }
        return prompts
    }
}

import PhiFormats

/// The JSON of OpenAI's answers: chat completions and their chunks, legacy text completions
/// and theirs, usage and log-probabilities.
struct ResponseBodies {
    let endpoint: CompletionRequest.Endpoint
    let id: String
    let created: Int
    let model: String

    private var object: String { endpoint == .chat ? "chat.completion" : "text_completion" }

    private func envelope(object: String, choices: [JSONValue], usage: JSONValue?) -> JSONValue
    {
        var members: [(key: String, value: JSONValue)] = [
            ("id", .string(id)), ("object", .string(object)), ("created", .int(created)),
            ("model", .string(model)), ("choices", .array(choices)),
        ]
        if let usage { members.append(("usage", usage)) }
        return .object(members)
    }

    static func usage(_ s: GenerationSummary) -> JSONValue {
        var fields: [(String, JSONValue)] = [
            ("prompt_tokens", .int(s.promptTokens)),
            ("completion_tokens", .int(s.completionTokens)),
            ("total_tokens", .int(s.promptTokens + s.completionTokens)),
            ("prompt_tokens_details", .object([("cached_tokens", .int(s.cachedTokens))])),
        ]
        // speculative decoding's drafts, in the names OpenAI gives predicted tokens
        if s.draftedTokens > 0 {
            fields.append(
                (
                    "completion_tokens_details",
                    .object([
                        ("accepted_prediction_tokens", .int(s.acceptedDraftTokens)),
                        ("rejected_prediction_tokens", .int(s.draftedTokens - s.acceptedDraftTokens)),
                    ])
                ))
        }
        return .object(fields)
    }

    // MARK: whole answers

    /// One choice of a whole answer.
    struct Choice {
        var index: Int
        var content: String?
        var calls: [ToolCall]
        var logprobs: [TokenLogprob]?
        var finishReason: String
    }

    func answer(_ choices: [Choice], usage: GenerationSummary) -> JSONValue {
        envelope(object: object, choices: choices.map(json), usage: Self.usage(usage))
    }

    private func json(_ c: Choice) -> JSONValue {
        switch endpoint {
        case .chat:
            var message: [(key: String, value: JSONValue)] = [
                ("role", .string("assistant")),
                ("content", c.content.map(JSONValue.string) ?? .null),
            ]
            if !c.calls.isEmpty { message.append(("tool_calls", Self.toolCalls(c.calls))) }
            return .object([
                ("index", .int(c.index)), ("message", .object(message)),
                ("logprobs", c.logprobs.map(Self.chatLogprobs) ?? .null),
                ("finish_reason", .string(c.finishReason)),
            ])
        case .completions:
            return .object([
                ("text", .string(c.content ?? "")), ("index", .int(c.index)),
                ("logprobs", c.logprobs.map(Self.legacyLogprobs) ?? .null),
                ("finish_reason", .string(c.finishReason)),
            ])
        }
    }

    // MARK: stream chunks

    /// A chunk with a delta (chat) or text (completions); `usage: null` when the client asked
    /// for usage, as OpenAI sends it.
    func chunk(
        index: Int = 0, content: String? = nil, role: Bool = false, calls: [ToolCall] = [],
        logprobs: [TokenLogprob]?, finishReason: String? = nil, usageNull: Bool
    ) -> JSONValue {
        let choice: JSONValue
        switch endpoint {
        case .chat:
            var delta: [(key: String, value: JSONValue)] = []
            if role { delta.append(("role", .string("assistant"))) }
            if let content { delta.append(("content", .string(content))) }
            if !calls.isEmpty { delta.append(("tool_calls", Self.toolCalls(calls, indexed: true))) }
            choice = .object([
                ("index", .int(index)), ("delta", .object(delta)),
                ("logprobs", logprobs.map(Self.chatLogprobs) ?? .null),
                ("finish_reason", finishReason.map(JSONValue.string) ?? .null),
            ])
        case .completions:
            choice = .object([
                ("text", .string(content ?? "")), ("index", .int(index)),
                ("logprobs", logprobs.map(Self.legacyLogprobs) ?? .null),
                ("finish_reason", finishReason.map(JSONValue.string) ?? .null),
            ])
        }
        return envelope(
            object: endpoint == .chat ? "chat.completion.chunk" : "text_completion",
            choices: [choice], usage: usageNull ? .null : nil)
    }

    /// The last chunk when `stream_options.include_usage`: no choices, the usage.
    func usageChunk(_ summary: GenerationSummary) -> JSONValue {
        envelope(
            object: endpoint == .chat ? "chat.completion.chunk" : "text_completion", choices: [],
            usage: Self.usage(summary))
    }

    // MARK: parts

    static func toolCalls(_ calls: [ToolCall], indexed: Bool = false) -> JSONValue {
        .array(
            calls.enumerated().map { i, call in
                var members: [(key: String, value: JSONValue)] = indexed ? [("index", .int(i))] : []
                members += [
                    ("id", .string(call.id)), ("type", .string("function")),
                    (
                        "function",
                        .object([
                            ("name", .string(call.name)), ("arguments", .string(call.arguments)),
                        ])
                    ),
                ]
                return .object(members)
            })
    }

    /// `{"content": [{"token", "logprob", "bytes", "top_logprobs": […]}]}`.
    static func chatLogprobs(_ entries: [TokenLogprob]) -> JSONValue {
        func item(_ token: String, _ logprob: Double) -> [(key: String, value: JSONValue)] {
            [
                ("token", .string(token)), ("logprob", .double(logprob)),
                ("bytes", .array(token.utf8.map { .int(Int($0)) })),
            ]
        }
        return .object([
            (
                "content",
                .array(
                    entries.map { e in
                        .object(
                            item(e.token, e.logprob) + [
                                (
                                    "top_logprobs",
                                    .array(e.top.map { .object(item($0.token, $0.logprob)) })
                                )
                            ])
                    })
            )
        ])
    }

    /// The completions API's columns: tokens, token_logprobs, top_logprobs, text_offset.
    static func legacyLogprobs(_ entries: [TokenLogprob]) -> JSONValue {
        .object([
            ("tokens", .array(entries.map { .string($0.token) })),
            ("token_logprobs", .array(entries.map { .double($0.logprob) })),
            (
                "top_logprobs",
                .array(
                    entries.map { e in
                        .object(e.top.map { (key: $0.token, value: JSONValue.double($0.logprob)) })
                    })
            ),
            ("text_offset", .array(entries.map { .int($0.textOffset) })),
        ])
    }
}

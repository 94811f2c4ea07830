import PhiFormats

/// The JSON of the Messages API: a message, its content blocks, stop reason and usage.
/// Usage as Anthropic counts it: `input_tokens` are the prompt tokens computed for this
/// request, `cache_read_input_tokens` those the prompt cache supplied.
struct MessageBodies {
    let id: String
    let model: String

    func message(content: [JSONValue], stop: (reason: String, sequence: String?)?, usage: JSONValue)
        -> JSONValue
    {
        .object([
            ("id", .string(id)), ("type", .string("message")), ("role", .string("assistant")),
            ("model", .string(model)), ("content", .array(content)),
            ("stop_reason", stop.map { .string($0.reason) } ?? .null),
            ("stop_sequence", stop?.sequence.map(JSONValue.string) ?? .null),
            ("usage", usage),
        ])
    }

    static func usage(_ s: GenerationSummary) -> JSONValue {
        .object([
            ("input_tokens", .int(s.promptTokens - s.cachedTokens)),
            ("cache_creation_input_tokens", .int(0)),
            ("cache_read_input_tokens", .int(s.cachedTokens)),
            ("output_tokens", .int(s.completionTokens)),
        ])
    }

    /// Before the answer is known (message_start): the prompt as sent, nothing generated.
    static func startUsage(promptTokens: Int) -> JSONValue {
        .object([
            ("input_tokens", .int(promptTokens)), ("cache_creation_input_tokens", .int(0)),
            ("cache_read_input_tokens", .int(0)), ("output_tokens", .int(0)),
        ])
    }

    /// `end_turn`, `max_tokens`, `stop_sequence` (with the one that matched) or `tool_use`.
    static func stop(_ s: GenerationSummary, calls: [ToolCall]) -> (reason: String, sequence: String?) {
        if !calls.isEmpty { return ("tool_use", nil) }
        if s.finishReason == .length { return ("max_tokens", nil) }
        if let sequence = s.stopString { return ("stop_sequence", sequence) }
        return ("end_turn", nil)
    }

    static func textBlock(_ text: String) -> JSONValue {
        .object([("type", .string("text")), ("text", .string(text))])
    }

    /// A `tool_use` block; `input` empty for the stream's content_block_start.
    static func toolUseBlock(_ call: ToolCall, input: JSONValue) -> JSONValue {
        .object([
            ("type", .string("tool_use")), ("id", .string(call.id)), ("name", .string(call.name)),
            ("input", input),
        ])
    }

    /// The model's calls as tool_use blocks, and as text those whose arguments are no JSON
    /// object (Anthropic's `input` must be one): written back as the model wrote them, so
    /// nothing it said is dropped.
    static func split(_ calls: [ToolCall]) -> (uses: [(ToolCall, JSONValue)], text: String) {
        var uses: [(ToolCall, JSONValue)] = []
        var text = ""
        for call in calls {
            if let input = try? JSONValue(parsing: Array(call.arguments.utf8)), input.objectValue != nil {
                uses.append((call, input))
            } else {
                text += ToolCallSyntax.open + JSONValue.object([
                    ("name", .string(call.name)), ("arguments", .string(call.arguments)),
                ]).serialized() + ToolCallSyntax.close
            }
        }
        return (uses, text)
    }
}

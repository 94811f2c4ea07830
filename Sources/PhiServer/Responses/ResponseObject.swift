import PhiFormats

/// The JSON of the Responses API: the response object at each stage (in progress,
/// completed, incomplete, failed), its output items (an assistant `message` with one
/// `output_text` part, `function_call`s) and `usage` with `input_tokens_details.cached_tokens`.
struct ResponseObject {
    let id: String
    let createdAt: Int
    let model: String
    let echo: ResponsesRequest.Echo
    let tools: ResponsesTools

    enum Status: String {
        case inProgress = "in_progress", completed, incomplete, failed
    }

    /// The status an answer ended with: cut by `max_output_tokens` (or the context) it is
    /// incomplete, as OpenAI reports it.
    static func status(_ summary: GenerationSummary) -> Status {
        summary.finishReason == .length ? .incomplete : .completed
    }

    func body(
        _ status: Status, output: [JSONValue] = [], summary: GenerationSummary? = nil,
        error: APIError? = nil
    ) -> JSONValue {
        .object([
            ("id", .string(id)), ("object", .string("response")), ("created_at", .int(createdAt)),
            ("status", .string(status.rawValue)),
            (
                "error",
                error.map {
                    .object([
                        ("code", .string($0.code ?? $0.type)), ("message", .string($0.message)),
                    ])
                } ?? .null
            ),
            (
                "incomplete_details",
                status == .incomplete
                    ? .object([("reason", .string("max_output_tokens"))]) : .null
            ),
            ("instructions", echo.instructions),
            ("max_output_tokens", echo.maxOutputTokens.map(JSONValue.int) ?? .null),
            ("model", .string(model)), ("output", .array(output)),
            ("parallel_tool_calls", .bool(echo.parallelToolCalls)),
            ("previous_response_id", .null),
            ("prompt_cache_key", echo.promptCacheKey.map(JSONValue.string) ?? .null),
            ("reasoning", .object([("effort", .null), ("summary", .null)])),
            ("store", .bool(false)), ("temperature", .double(echo.temperature)),
            ("text", .object([("format", echo.textFormat)])),
            ("tool_choice", echo.toolChoice), ("tools", echo.tools), ("top_p", .double(echo.topP)),
            ("truncation", .string("disabled")),
            ("usage", summary.map(Self.usage) ?? .null), ("user", .null),
            ("metadata", echo.metadata),
        ])
    }

    static func usage(_ s: GenerationSummary) -> JSONValue {
        .object([
            ("input_tokens", .int(s.promptTokens)),
            ("input_tokens_details", .object([("cached_tokens", .int(s.cachedTokens))])),
            ("output_tokens", .int(s.completionTokens)),
            ("output_tokens_details", .object([("reasoning_tokens", .int(0))])),
            ("total_tokens", .int(s.promptTokens + s.completionTokens)),
        ])
    }

    func message(id: String, text: String?, status: Status) -> JSONValue {
        .object([
            ("id", .string(id)), ("type", .string("message")), ("status", .string(status.rawValue)),
            ("role", .string("assistant")),
            ("content", .array(text.map { [Self.textPart($0)] } ?? [])),
        ])
    }

    static func textPart(_ text: String) -> JSONValue {
        .object([
            ("type", .string("output_text")), ("text", .string(text)), ("annotations", .array([])),
            ("logprobs", .array([])),
        ])
    }

    /// A `function_call` item; its id is the call's id with `fc_` for `call_`.
    func functionCall(_ call: ToolCall, arguments: String? = nil, status: Status) -> JSONValue {
        .object(
            [
                ("id", .string(Self.itemID(of: call))), ("type", .string("function_call")),
                ("status", .string(status.rawValue)), ("call_id", .string(call.id)),
            ] + tools.nameMembers(of: call) + [
                ("arguments", .string(arguments ?? call.arguments))
            ])
    }

    static func itemID(of call: ToolCall) -> String { "fc_" + call.id.dropFirst("call_".count) }

    /// The output of a whole answer: the message (when there is text, or nothing else), then
    /// the calls.
    func output(content: String?, calls: [ToolCall], messageID: String, status: Status)
        -> [JSONValue]
    {
        var items: [JSONValue] = []
        if let content, !content.isEmpty || calls.isEmpty {
            items.append(message(id: messageID, text: content, status: status))
        }
        return items + calls.map { functionCall($0, status: .completed) }
    }
}

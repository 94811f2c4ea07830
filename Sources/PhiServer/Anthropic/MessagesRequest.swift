import PhiEngine
import PhiFormats

/// A `POST /v1/messages` (or `/v1/messages/count_tokens`) body, checked and translated into
/// the server's one request model: `system` (a string or text blocks) becomes the system
/// message; `messages` with `text`, `tool_use` and `tool_result` blocks become chat messages
/// with `tool_calls` and `tool` results (thinking blocks a client replays are skipped: this
/// model writes none); `tools` with `input_schema` become function tools. What the server
/// cannot honour is a 400 naming the field.
struct MessagesRequest {
    var completion: CompletionRequest

    /// `countOnly`: for count_tokens, which takes no `max_tokens` and generates nothing.
    init(body: [UInt8], contextSize: Int, countOnly: Bool = false) throws(APIError) {
        let f = try RequestFields(body: body)
        guard let model = try f.string("model") else {
            throw .invalidRequest("'model' is missing", param: "model")
        }
        let maxTokens = try f.int("max_tokens", in: 1...Int(Int32.max))
        if maxTokens == nil && !countOnly {
            throw .invalidRequest(
                "'max_tokens' is missing: the Messages API requires it", param: "max_tokens")
        }
        let temperature = try f.number("temperature", in: 0...1) ?? 1
        let topP = try f.number("top_p", in: 0...1) ?? 1
        guard topP > 0 else {
            throw .invalidRequest("'top_p' must be above 0", param: "top_p", code: "invalid_value")
        }
        let topK = try f.int("top_k", in: 0...Int(Int32.max)) ?? 0
        _ = try f.object("metadata")
        // Extended thinking is for models that think; this one answers directly.
        _ = try f.object("thinking")
        // Structured output: `{"type": "json_schema", "schema": {...}}` (`output_format` is
        // the beta's name). `effort` is a hint.
        let answerGrammar = try Self.outputFormat(f)
        for field in ["mcp_servers", "container"] where f.value(field) != nil {
            throw .invalidRequest("'\(field)' is not supported by this server", param: field,
                code: "unsupported_value")
        }
        let stop = try f.array("stop_sequences") ?? []
        let stopStrings = try stop.enumerated().map { (i, item) throws(APIError) -> String in
            guard let s = item.stringValue else {
                throw .invalidType("stop_sequences[\(i)]", expected: "a string")
            }
            return s
        }
        let tools = try Self.tools(f)
        let (toolChoice, parallel) = try Self.toolChoice(f, tools: tools)
        var messages = try Self.system(f)
        messages += try MessagesInput.messages(f, contextSize: contextSize)
        completion = CompletionRequest(
            translatedChat: messages, tools: tools, toolChoice: toolChoice,
            parallelToolCalls: parallel, model: model, stream: try f.bool("stream") ?? false,
            maxTokens: maxTokens, temperature: temperature, topP: topP, topK: topK,
            stop: stopStrings)
        // Claude Code asks for up to 32,000 tokens whatever the model: Anthropic's
        // max_tokens is a bound the answer may stop before, so the context's end is one.
        completion.maxTokensIsBound = true
        completion.answerGrammar = answerGrammar
        completion.adapter = try f.string("adapter")
    }

    private static func outputFormat(_ f: RequestFields) throws(APIError) -> Grammar? {
        let param = f.value("output_format") != nil ? "output_format" : "output_config"
        var format = try f.object("output_config")?.object("format")
        if format == nil { format = try f.object("output_format") }
        guard let format else { return nil }
        guard try format.string("type") == "json_schema" else {
            throw .invalidRequest(
                "'\(format.path).type' must be \"json_schema\"", param: param,
                code: "invalid_value")
        }
        return try RequestedFormat.compile(RequestedFormat.schema(format, param: param), param: param)
    }

    /// `system`: a string or a list of text blocks (joined).
    private static func system(_ f: RequestFields) throws(APIError) -> [JSONValue] {
        guard let value = f.value("system") else { return [] }
        let text = try value.joinedText("system", partTypes: ["text"])
        return [.object([("role", .string("system")), ("content", .string(text))])]
    }

    /// `tools`: `{"name", "description", "input_schema"}` (type "custom" or none), as chat
    /// completions' function tools. Anthropic's server tools (bash, text editor, web search)
    /// are refused: this server runs none.
    private static func tools(_ f: RequestFields) throws(APIError) -> [JSONValue] {
        var result: [JSONValue] = []
        for (i, tool) in (try f.array("tools") ?? []).enumerated() {
            let param = "tools[\(i)]"
            if let type = tool["type"]?.stringValue, type != "custom" {
                throw .invalidRequest(
                    "'\(param)' has type \"\(type)\": this server runs no server tools; give "
                        + "client tools as {\"name\", \"description\", \"input_schema\"}",
                    param: param, code: "unsupported_value")
            }
            guard let name = tool["name"]?.stringValue, !name.isEmpty else {
                throw .invalidRequest("'\(param).name' is missing", param: param)
            }
            guard let schema = tool["input_schema"], schema.objectValue != nil else {
                throw .invalidRequest(
                    "'\(param).input_schema' must be a JSON schema object", param: param)
            }
            guard !result.contains(where: { $0["function"]?["name"]?.stringValue == name }) else {
                throw .invalidRequest("'\(param)': two tools are named '\(name)'", param: param)
            }
            var function: [(key: String, value: JSONValue)] = [("name", .string(name))]
            if let description = tool["description"]?.stringValue {
                function.append(("description", .string(description)))
            }
            function.append(("parameters", schema))
            result.append(.object([("type", .string("function")), ("function", .object(function))]))
        }
        return result
    }

    /// `tool_choice`: `{"type": "auto" | "any" | "tool" (with "name") | "none"}`, and
    /// `disable_parallel_tool_use` (only the first call is given back).
    private static func toolChoice(_ f: RequestFields, tools: [JSONValue]) throws(APIError)
        -> (CompletionRequest.ToolChoice, parallel: Bool)
    {
        guard let choice = try f.object("tool_choice") else { return (tools.isEmpty ? .none : .auto, true) }
        let parallel = !(try choice.bool("disable_parallel_tool_use") ?? false)
        let type = try choice.string("type")
        switch type {
        case "none": return (.none, parallel)
        case "auto": return (tools.isEmpty ? .none : .auto, parallel)
        case "any", "tool":
            guard !tools.isEmpty else {
                throw .invalidRequest(
                    "'tool_choice' of type \"\(type!)\" needs 'tools'", param: "tool_choice")
            }
            guard type == "tool" else { return (.required, parallel) }
            guard let name = try choice.string("name") else {
                throw .invalidRequest("'tool_choice.name' is missing", param: "tool_choice")
            }
            guard tools.contains(where: { $0["function"]?["name"]?.stringValue == name }) else {
                throw .invalidRequest(
                    "'tool_choice' names the tool '\(name)', which is not in 'tools'",
                    param: "tool_choice")
            }
            return (.function(name), parallel)
        default:
            throw .invalidRequest(
                "'tool_choice.type' must be \"auto\", \"any\", \"tool\" or \"none\"",
                param: "tool_choice")
        }
    }
}

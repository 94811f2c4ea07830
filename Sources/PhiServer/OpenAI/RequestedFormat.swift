import PhiEngine
import PhiFormats

/// The shape a request asks the answer to have (structured output), read from each API's
/// field and compiled at once, so a schema keyword phikit does not enforce is a 400 naming
/// it before anything is queued. The grammar is matched token by token in the slot
/// (`GenerationRequest.makeConstraint`).
enum RequestedFormat {
    /// OpenAI's `response_format` (`text`, `json_object`, `json_schema`) and llama-server's
    /// `json_schema` (a schema) and `grammar` (GBNF) fields; at most one of them.
    static func read(_ f: RequestFields) throws(APIError) -> Grammar? {
        var found: [(param: String, format: OutputFormat)] = []
        if let format = try f.object("response_format") {
            let type = try format.string("type") ?? "text"
            switch type {
            case "text": break
            case "json_object": found.append(("response_format", .jsonObject))
            case "json_schema":
                guard let wrapper = try format.object("json_schema") else {
                    throw .invalidRequest(
                        "'response_format' of type \"json_schema\" needs 'json_schema': "
                            + "{\"name\", \"schema\"}", param: "response_format",
                        code: "missing_required_parameter")
                }
                found.append(("response_format", try schema(wrapper, param: "response_format")))
            default:
                throw .invalidRequest(
                    "'response_format.type' must be \"text\", \"json_object\" or "
                        + "\"json_schema\", not \"\(type)\"", param: "response_format",
                    code: "invalid_value")
            }
        }
        if let schema = f.value("json_schema") {
            guard case .object = schema else {
                throw .invalidType("json_schema", expected: "an object (a JSON schema)")
            }
            found.append(("json_schema", .jsonSchema(schema)))
        }
        if let grammar = try f.string("grammar") { found.append(("grammar", .grammar(grammar))) }
        guard found.count <= 1 else {
            throw .invalidRequest(
                "give one of " + found.map { "'\($0.param)'" }.joined(separator: ", ")
                    + ": each sets the whole answer's shape", param: found[1].param,
                code: "invalid_value")
        }
        guard let (param, format) = found.first else { return nil }
        return try compile(format, param: param)
    }

    /// `{"schema": {...}, "name", "strict"}`: OpenAI's `json_schema` object, and the
    /// Responses API's `text.format` (the same fields, one level up). `strict` may be either:
    /// the schema is always enforced.
    static func schema(_ f: RequestFields, param: String) throws(APIError) -> OutputFormat {
        _ = try f.string("name")
        _ = try f.string("description")
        _ = try f.bool("strict")
        guard let schema = try f.object("schema") else {
            throw .invalidRequest(
                "'\(f.path).schema' is missing: give the JSON schema the answer must follow",
                param: param, code: "missing_required_parameter")
        }
        return .jsonSchema(schema.object)
    }

    /// What `tool_choice` "required" or a named function makes the answer: calls in the
    /// model's syntax after the start `PromptBuilder.forcedStart` feeds (the tag; for a named
    /// function the call up to its arguments), with arguments valid against each tool's
    /// `parameters`, then the closing tag. nil when the model chooses ("none", "auto"). Every
    /// API's request comes through here (Responses and Anthropic translate theirs), so a
    /// format of the answer besides a forced call is refused here for all of them.
    static func toolCalls(_ request: CompletionRequest) throws(APIError) -> Grammar? {
        guard case .chat(_, let listed) = request.input else { return nil }
        let tools = listed.compactMap { tool -> ToolCallFormat.Tool? in
            guard let function = tool["function"], let name = function["name"]?.stringValue
            else { return nil }
            return ToolCallFormat.Tool(name: name, parameters: function["parameters"])
        }
        let format: ToolCallFormat
        switch request.toolChoice {
        case .none, .auto: return nil
        case .required:
            format = ToolCallFormat(
                tools: tools, close: ToolCallSyntax.close,
                allowsSeveral: request.parallelToolCalls)
        case .function(let name):
            format = ToolCallFormat(
                tools: Array(tools.filter { $0.name == name }.prefix(1)),
                close: ToolCallSyntax.close, allowsSeveral: false, start: .arguments)
        }
        guard request.answerGrammar == nil else {
            throw .invalidRequest(
                "'tool_choice' forces a tool call, so the answer cannot also follow a format "
                    + "of its own ('response_format', 'json_schema', 'grammar')",
                param: "tool_choice", code: "invalid_value")
        }
        do {
            return try format.compile()
        } catch {
            let hint = error.hint.map { " (\($0))" } ?? ""
            throw .invalidRequest(
                "a tool's 'parameters' cannot be enforced for 'tool_choice': "
                    + error.message + hint, param: "tools", code: "unsupported_value")
        }
    }

    /// The format's grammar; what it cannot enforce is a 400 naming the keyword or pattern.
    static func compile(_ format: OutputFormat, param: String) throws(APIError) -> Grammar {
        do {
            return try format.compile()
        } catch {
            let hint = error.hint.map { " (\($0))" } ?? ""
            throw .invalidRequest(error.message + hint, param: param, code: "unsupported_value")
        }
    }
}

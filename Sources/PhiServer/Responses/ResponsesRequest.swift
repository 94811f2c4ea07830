import PhiEngine
import PhiFormats

/// A `POST /v1/responses` body, checked and translated into the server's one request model
/// (a chat `CompletionRequest`). Stateless, as Codex uses it: the whole conversation comes in
/// `input` every turn. Anything the server cannot honour is a 400 naming the field, never
/// ignored: `previous_response_id`, `store: true` and the like because nothing is kept
/// between requests.
struct ResponsesRequest {
    var completion: CompletionRequest
    /// How namespaced tools (Codex's MCP groups) were flattened for the model, so calls can
    /// be given back as `{namespace, name}`.
    var tools: ResponsesTools
    /// Echoed in the response object as the client sent them.
    var echo: Echo

    struct Echo {
        var instructions: JSONValue = .null
        var tools: JSONValue = .array([])
        var toolChoice: JSONValue = .string("auto")
        var parallelToolCalls = true
        var maxOutputTokens: Int?
        var temperature: Double = 1
        var topP: Double = 1
        var metadata: JSONValue = .object([])
        var promptCacheKey: String?
        /// `text.format` as given (OpenAI echoes it; the SDK's `parse` reads it back).
        var textFormat: JSONValue = .object([("type", .string("text"))])
    }

    init(body: [UInt8], contextSize: Int) throws(APIError) {
        let f = try RequestFields(body: body)
        try Self.refuseState(f)
        var echo = Echo()
        echo.maxOutputTokens = try f.int("max_output_tokens", in: 1...Int(Int32.max))
        echo.temperature = try f.number("temperature", in: 0...2) ?? 1
        echo.topP = try f.number("top_p", in: 0...1) ?? 1
        guard echo.topP > 0 else {
            throw .invalidRequest("'top_p' must be above 0", param: "top_p", code: "invalid_value")
        }
        echo.parallelToolCalls = try f.bool("parallel_tool_calls") ?? true
        echo.metadata = try f.object("metadata")?.object ?? .object([])
        echo.promptCacheKey = try f.string("prompt_cache_key")
        _ = try f.string("user")
        _ = try f.string("safety_identifier")
        _ = try f.string("service_tier")
        // Reasoning options are for models that reason; this one answers directly.
        _ = try f.object("reasoning")
        try Self.checkInclude(f)
        let answerGrammar = try Self.textFormat(f)
        if let format = try f.object("text")?.value("format") { echo.textFormat = format }
        if let truncation = try f.string("truncation"), truncation != "disabled" {
            throw .invalidRequest(
                "'truncation' can only be \"disabled\": this server never drops input to fit "
                    + "the context (a prompt that does not fit is a 400)", param: "truncation",
                code: "unsupported_value")
        }
        if let top = try f.int("top_logprobs", in: 0...20), top > 0 {
            throw .invalidRequest(
                "'top_logprobs' is not supported on /v1/responses: use /v1/chat/completions",
                param: "top_logprobs", code: "unsupported_value")
        }

        let instructions = try f.string("instructions")
        echo.instructions = instructions.map(JSONValue.string) ?? .null
        tools = try ResponsesTools(f)
        echo.tools = f.value("tools") ?? .array([])
        let toolChoice = try tools.choice(f)
        echo.toolChoice = f.value("tool_choice") ?? .string(toolChoice == .none ? "none" : "auto")
        var messages = instructions.map {
            [JSONValue.object([("role", .string("system")), ("content", .string($0))])]
        } ?? []
        messages += try ResponsesInput.messages(f, contextSize: contextSize)
        completion = CompletionRequest(
            translatedChat: messages, tools: tools.chatTools, toolChoice: toolChoice,
            parallelToolCalls: echo.parallelToolCalls, model: try f.string("model"),
            stream: try f.bool("stream") ?? false, maxTokens: echo.maxOutputTokens,
            temperature: echo.temperature, topP: echo.topP,
            // `stop` is not in OpenAI's Responses API; llama-server and vLLM take it.
            stop: try CompletionRequest.stop(f))
        completion.answerGrammar = answerGrammar
        completion.adapter = try f.string("adapter")
        self.echo = echo
    }

    /// Fields that only make sense to a server that keeps responses: refused, so that a
    /// client never believes history was used when it was dropped.
    private static func refuseState(_ f: RequestFields) throws(APIError) {
        let stateless = "this server is stateless and keeps no responses: send the whole "
            + "conversation in 'input'"
        for field in ["previous_response_id", "conversation"] where f.value(field) != nil {
            throw .invalidRequest("'\(field)' is not supported: \(stateless)", param: field,
                code: "unsupported_value")
        }
        if try f.bool("store") == true {
            throw .invalidRequest("'store': true is not supported: \(stateless); send "
                + "\"store\": false", param: "store", code: "unsupported_value")
        }
        if try f.bool("background") == true {
            throw .invalidRequest("'background': true is not supported: \(stateless)",
                param: "background", code: "unsupported_value")
        }
    }

    /// `include`: extra output the client wants. Reasoning content is empty for a model that
    /// does not reason; anything else would change the answer and is refused.
    private static func checkInclude(_ f: RequestFields) throws(APIError) {
        guard let include = try f.array("include") else { return }
        for (i, item) in include.enumerated() {
            guard let name = item.stringValue else {
                throw .invalidType("include[\(i)]", expected: "a string")
            }
            guard name.hasPrefix("reasoning.") else {
                throw .invalidRequest(
                    "'include' value \"\(name)\" is not supported (only reasoning content, which "
                        + "this model does not produce)", param: "include", code: "unsupported_value")
            }
        }
    }

    /// `text`: `format` plain text only until constrained sampling is there (a JSON schema
    /// accepted and not enforced would be a promise broken); `verbosity` is a hint.
    /// `text.format`: `text`, `json_object`, or `json_schema` with `name`, `schema` and
    /// `strict` beside `type` (the Responses API's flat form of chat's `response_format`).
    private static func textFormat(_ f: RequestFields) throws(APIError) -> Grammar? {
        guard let text = try f.object("text") else { return nil }
        _ = try text.string("verbosity")
        guard let format = try text.object("format") else { return nil }
        let type = try format.string("type") ?? "text"
        switch type {
        case "text": return nil
        case "json_object": return try RequestedFormat.compile(.jsonObject, param: "text.format")
        case "json_schema":
            return try RequestedFormat.compile(
                RequestedFormat.schema(format, param: "text.format"), param: "text.format")
        default:
            throw .invalidRequest(
                "'text.format.type' must be \"text\", \"json_object\" or \"json_schema\", "
                    + "not \"\(type)\"", param: "text.format", code: "invalid_value")
        }
    }
}

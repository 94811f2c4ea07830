import PhiFormats
import Testing

@testable import PhiServer

/// `POST /v1/messages` bodies (Anthropic): content blocks as chat messages, tools with
/// `input_schema` as functions, `tool_choice`, and the 400s in Anthropic's error shape.
@Suite("Anthropic Messages request translation")
struct MessagesRequestTests {
    static func parse(_ json: String, countOnly: Bool = false) throws(APIError) -> MessagesRequest {
        try MessagesRequest(body: Array(json.utf8), contextSize: 4096, countOnly: countOnly)
    }

    static func error(_ json: String) -> APIError? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error
        }
    }

    static func messages(_ r: MessagesRequest) -> [JSONValue] {
        guard case .chat(let messages, _) = r.completion.input else { return [] }
        return messages
    }

    static let tool = #"{"name": "get_weather", "input_schema": {"type": "object"}}"#

    @Test("system blocks, a tool_use turn, its tool_result, thinking blocks skipped")
    func agentTurns() throws {
        let r = try Self.parse(
            #"{"model": "m", "max_tokens": 50, "system": [{"type": "text", "text": "Be brief"}], "#
                + #""stop_sequences": ["END"], "temperature": 0, "top_k": 5, "metadata": {"user_id": "u"}, "#
                + #""tools": [\#(Self.tool)], "tool_choice": {"type": "any", "disable_parallel_tool_use": true}, "#
                + #""messages": [{"role": "user", "content": "Weather?"}, "#
                + #"{"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}, "#
                + #"{"type": "text", "text": "Let me check."}, "#
                + #"{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}]}, "#
                + #"{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "#
                + #""content": [{"type": "text", "text": "sunny"}]}, {"type": "text", "text": "And tomorrow?"}]}]}"#)
        let m = Self.messages(r)
        #expect(m.map { $0["role"]?.stringValue } == ["system", "user", "assistant", "tool", "user"])
        #expect(m[0]["content"]?.stringValue == "Be brief")
        #expect(m[2]["content"]?.stringValue == "Let me check.")
        let call = m[2]["tool_calls"]?.arrayValue?.first
        #expect(call?["function"]?["arguments"]?.stringValue == #"{"city":"Paris"}"#)
        #expect(m[3]["tool_call_id"]?.stringValue == "toolu_1" && m[3]["content"]?.stringValue == "sunny")
        #expect(m[4]["content"]?.stringValue == "And tomorrow?")
        let c = r.completion
        #expect(c.maxTokens == 50 && c.stop == ["END"] && c.settings[.temperature] == .number(0) && c.settings[.topK] == .integer(5))
        #expect(c.toolChoice == .required && !c.parallelToolCalls && c.offersTools)
    }

    @Test func toolChoices() throws {
        let base = #""model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [\#(Self.tool)]"#
        #expect(try Self.parse("{\(base)}").completion.toolChoice == .auto)
        #expect(try Self.parse(#"{\#(base), "tool_choice": {"type": "none"}}"#).completion.toolChoice == .none)
        #expect(
            try Self.parse(#"{\#(base), "tool_choice": {"type": "tool", "name": "get_weather"}}"#)
                .completion.toolChoice == .function("get_weather"))
    }

    @Test("count_tokens needs no max_tokens")
    func countOnly() throws {
        let r = try Self.parse(
            #"{"model": "m", "messages": [{"role": "user", "content": "x"}]}"#, countOnly: true)
        #expect(r.completion.maxTokens == nil)
    }

    @Test(
        "bad input is a 400 naming the problem",
        arguments: [
            (#"{"model": "m", "messages": [{"role": "user", "content": "x"}]}"#, "max_tokens"),
            (#"{"max_tokens": 5, "messages": [{"role": "user", "content": "x"}]}"#, "'model' is missing"),
            (
                #"{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "image", "source": {}}]}]}"#,
                "\"image\" block"
            ),
            (
                #"{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "x"}]}]}"#,
                "no tool_use before it"
            ),
            (
                #"{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}]}]}"#,
                "in a user message"
            ),
            (
                #"{"model": "m", "max_tokens": 5, "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{oops"}]}]}"#,
                "must be an object"
            ),
            (#"{"model": "m", "max_tokens": 5, "messages": [{"role": "system", "content": "x"}]}"#, "'system'"),
            (#"{"model": "m", "max_tokens": 5, "messages": []}"#, "non-empty"),
            (
                #"{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "bash_20250124", "name": "bash"}]}"#,
                "server tools"
            ),
            (
                #"{"model": "m", "max_tokens": 5, "output_config": {"format": {"type": "json_schema", "schema": {"type": "array", "uniqueItems": true}}}, "messages": [{"role": "user", "content": "x"}]}"#,
                "uniqueItems"
            ),
            (#"{"model": "m", "max_tokens": 5, "temperature": 1.5, "messages": [{"role": "user", "content": "x"}]}"#, "temperature"),
        ])
    func refusals(_ json: String, _ fragment: String) {
        let error = Self.error(json)
        #expect(error?.status == 400)
        #expect(error?.message.contains(fragment) == true, "\(String(describing: error?.message))")
    }

    @Test("errors in Anthropic's shape, typed by status")
    func errorShape() {
        let error = APIError.invalidRequest("'max_tokens' is missing", param: "max_tokens")
        #expect(
            AnthropicError.json(error).serialized()
                == #"{"type":"error","error":{"type":"invalid_request_error","message":"'max_tokens' is missing"}}"#)
        #expect(AnthropicError.type(of: 404) == "not_found_error")
        #expect(AnthropicError.type(of: 503) == "overloaded_error")
        #expect(AnthropicError.type(of: 500) == "api_error")
    }
}

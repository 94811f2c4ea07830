import PhiFormats
import Testing

@testable import PhiServer

/// `POST /v1/responses` bodies: how input items become chat messages and tools become the
/// model's functions, and the 400s (in OpenAI's shape) for what a stateless text server
/// cannot honour.
@Suite("Responses request translation")
struct ResponsesRequestTests {
    static func parse(_ json: String, context: Int = 4096) throws(APIError) -> ResponsesRequest {
        try ResponsesRequest(body: Array(json.utf8), contextSize: context)
    }

    static func error(_ json: String, context: Int = 4096) -> APIError? {
        do {
            _ = try parse(json, context: context)
            return nil
        } catch {
            return error
        }
    }

    static func messages(_ r: ResponsesRequest) -> [JSONValue] {
        guard case .chat(let messages, _) = r.completion.input else { return [] }
        return messages
    }

    @Test func stringInputAndInstructions() throws {
        let r = try Self.parse(
            #"{"model": "m", "instructions": "Be brief", "input": "Hi", "max_output_tokens": 9, "#
                + #""temperature": 0.5, "stream": true, "store": false, "reasoning": {"effort": "low"}, "#
                + #""include": ["reasoning.encrypted_content"], "prompt_cache_key": "k"}"#)
        #expect(
            Self.messages(r) == [
                .object([("role", .string("system")), ("content", .string("Be brief"))]),
                .object([("role", .string("user")), ("content", .string("Hi"))]),
            ])
        #expect(r.completion.maxTokens == 9 && r.completion.settings[.temperature] == .number(0.5) && r.completion.stream)
        #expect(r.completion.toolChoice == .none && !r.completion.offersTools)
        #expect(r.echo.promptCacheKey == "k")
    }

    @Test("an agent loop's items: message, function_call joined to it, its output as a tool message")
    func agentItems() throws {
        let r = try Self.parse(
            #"{"input": [{"role": "developer", "content": "rules"}, "#
                + #"{"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Weather?"}]}, "#
                + #"{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Let me check."}]}, "#
                + #"{"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}, "#
                + #"{"type": "reasoning", "summary": []}, "#
                + #"{"type": "function_call_output", "call_id": "call_1", "output": "sunny"}], "#
                + #""tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]}"#)
        let m = Self.messages(r)
        #expect(m.map { $0["role"]?.stringValue } == ["system", "user", "assistant", "tool"])
        #expect(m[2]["content"]?.stringValue == "Let me check.")
        let call = m[2]["tool_calls"]?.arrayValue?.first
        #expect(call?["id"]?.stringValue == "call_1")
        #expect(call?["function"]?["arguments"]?.stringValue == #"{"city":"Paris"}"#)
        #expect(m[3]["tool_call_id"]?.stringValue == "call_1" && m[3]["content"]?.stringValue == "sunny")
        #expect(r.completion.toolChoice == .auto && r.completion.offersTools)
    }

    @Test("Codex's namespace groups become <namespace>__<name> functions, given back split")
    func namespaces() throws {
        let r = try Self.parse(
            #"{"input": "x", "tools": [{"type": "namespace", "name": "mcp__docs", "tools": "#
                + #"[{"type": "function", "name": "search", "parameters": {"type": "object"}}]}], "#
                + #""tool_choice": {"type": "function", "name": "search", "namespace": "mcp__docs"}}"#)
        #expect(r.tools.chatTools.first?["function"]?["name"]?.stringValue == "mcp__docs__search")
        #expect(r.completion.toolChoice == .function("mcp__docs__search"))
        let members = r.tools.nameMembers(of: ToolCall(id: "call_x", name: "mcp__docs__search", arguments: "{}"))
        #expect(members.map(\.key) == ["name", "namespace"])
        #expect(members.map(\.value) == [.string("search"), .string("mcp__docs")])
    }

    @Test(
        "what a stateless text server cannot honour is a 400 naming the field",
        arguments: [
            (#"{"input": "x", "previous_response_id": "resp_1"}"#, "previous_response_id", "stateless"),
            (#"{"input": "x", "store": true}"#, "store", "stateless"),
            (#"{"input": "x", "conversation": "c"}"#, "conversation", "stateless"),
            (
                #"{"input": "x", "text": {"format": {"type": "json_schema", "name": "a", "schema": {"type": "object", "minProperties": 1}}}}"#,
                "text.format", "minProperties"
            ),
            (#"{"input": "x", "tools": [{"type": "web_search"}]}"#, "tools[0]", "hosted"),
            (#"{"input": [{"type": "item_reference", "id": "msg_1"}]}"#, "input[0]", "stateless"),
            (
                #"{"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "u"}]}]}"#,
                "input[0].content", "text only"
            ),
            (
                #"{"input": [{"type": "function_call_output", "call_id": "call_9", "output": "x"}]}"#,
                "input[0]", "no function_call"
            ),
            (
                #"{"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": "{oops"}]}"#,
                "input[0].arguments", "not valid JSON"
            ),
            (#"{"input": "x", "tool_choice": "required"}"#, "tool_choice", "needs 'tools'"),
            (#"{"input": [{"role": "tool", "content": "x"}]}"#, "input[0]", "\"developer\""),
            (#"{"input": "x", "include": ["message.output_text.logprobs"]}"#, "include", "not supported"),
            (#"{}"#, "input", "missing"),
        ])
    func refusals(_ json: String, _ param: String, _ fragment: String) {
        let error = Self.error(json)
        #expect(error?.status == 400)
        #expect(error?.param == param, "\(String(describing: error))")
        #expect(error?.message.contains(fragment) == true, "\(String(describing: error?.message))")
    }

    @Test("10,000 input items are refused before any is rendered")
    func tooManyItems() {
        let items = Array(repeating: #"{"role": "user", "content": "x"}"#, count: 10_000)
        let error = Self.error(#"{"input": [\#(items.joined(separator: ","))]}"#, context: 4096)
        #expect(error?.status == 400 && error?.code == "context_length_exceeded")
    }
}

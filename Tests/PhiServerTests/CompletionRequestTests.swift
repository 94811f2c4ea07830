import Testing

@testable import PhiServer

/// Request bodies: defaults, the fields each endpoint takes, and the 400s naming the field.
@Suite("OpenAI request parsing")
struct CompletionRequestTests {
    static func parse(_ endpoint: CompletionRequest.Endpoint, _ json: String) throws(APIError)
        -> CompletionRequest
    {
        try CompletionRequest(endpoint, body: Array(json.utf8))
    }

    static func error(_ endpoint: CompletionRequest.Endpoint, _ json: String) -> APIError? {
        do {
            _ = try parse(endpoint, json)
            return nil
        } catch {
            return error
        }
    }

    @Test func chatDefaultsAndFields() throws {
        let r = try Self.parse(
            .chat,
            #"{"model": "m", "messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, "#
                + #"{"type": "text", "text": "b"}]}], "stop": "x", "max_completion_tokens": 5, "#
                + #""logprobs": true, "top_logprobs": 3, "stream": true, "#
                + #""stream_options": {"include_usage": true}, "seed": -1, "top_k": -1}"#)
        guard case .chat(let messages, let tools) = r.input else {
            Issue.record("not a chat")
            return
        }
        #expect(messages.first?["content"]?.stringValue == "ab")
        #expect(tools.isEmpty)
        #expect(r.stop == ["x"] && r.maxTokens == 5 && r.logprobs == 3)
        #expect(r.stream && r.includeUsage && r.settings[.seed] == .integer(-1))
        #expect(r.settings[.topK] == .integer(0))
        // Not given: the model's defaults fill them in (ModelContainer.parameters).
        #expect(r.settings[.temperature] == nil && r.settings[.topP] == nil)
    }

    @Test func completionsPromptForms() throws {
        guard case .text("a") = try Self.parse(.completions, #"{"prompt": ["a"]}"#).input else {
            Issue.record("one-string list")
            return
        }
        guard case .tokens([1, 2]) = try Self.parse(.completions, #"{"prompt": [1, 2]}"#).input
        else {
            Issue.record("token ids")
            return
        }
        #expect(try Self.parse(.completions, #"{"prompt": "a", "logprobs": 2}"#).logprobs == 2)
    }

    @Test(
        "a field of the wrong type or range is a 400 naming it",
        arguments: [
            (#"{"messages": []}"#, "messages"),
            (#"{"messages": [{"content": "x"}]}"#, "messages[0].role"),
            (#"{"messages": [{"role": "user", "content": 3}]}"#, "messages[0].content"),
            (#"{"messages": [{"role": "user", "content": "x"}], "temperature": 3}"#, "temperature"),
            (#"{"messages": [{"role": "user", "content": "x"}], "top_p": 0}"#, "top_p"),
            (#"{"messages": [{"role": "user", "content": "x"}], "top_logprobs": 11, "logprobs": true}"#, "top_logprobs"),
            (#"{"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2}"#, "top_logprobs"),
            (#"{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}"#, "stream"),
            (#"{"messages": [{"role": "user", "content": "x"}], "stream_options": {"include_usage": 1}}"#, "stream_options.include_usage"),
            (#"{"messages": [{"role": "user", "content": "x"}], "tools": [{"type": "x"}]}"#, "tools[0]"),
            (#"{"messages": [{"role": "user", "content": "x"}], "tool_choice": "required"}"#, "tool_choice"),
            (#"{"messages": [{"role": "user", "content": "x"}], "tool_choice": "any"}"#, "tool_choice"),
            (#"{"messages": [{"role": "user", "content": "x"}], "tool_choice": 1}"#, "tool_choice"),
            (#"{"messages": [{"role": "user", "content": "x"}], "tools": [\#(weather)], "#
                + #""tool_choice": {"type": "function", "function": {"name": "other"}}}"#, "tool_choice"),
            (#"{"messages": [{"role": "user", "content": "x"}], "presence_penalty": 2.5}"#, "presence_penalty"),
            (#"{"messages": [{"role": "user", "content": "x"}], "frequency_penalty": -3}"#, "frequency_penalty"),
            (#"{"messages": [{"role": "user", "content": "x"}], "n": 0}"#, "n"),
            (#"{"messages": [{"role": "user", "content": "x"}], "min_p": 1.5}"#, "min_p"),
            (#"{"messages": [{"role": "user", "content": "x"}], "max_tokens": 0}"#, "max_tokens"),
            (#"{"messages": [{"role": "user", "content": "x"}], "response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object", "not": {}}}}}"#, "response_format"),
            (#"{"messages": [{"role": "user", "content": "x"}], "logit_bias": {"50256": -100}}"#, "logit_bias"),
            (#"{"messages": [{"role": "user", "content": "x"}], "functions": []}"#, "functions"),
            (#"{"messages": [{"role": "user", "content": "x"}], "best_of": 2}"#, "best_of"),
            (#"{"messages": [{"role": "user", "content": "x"}], "parallel_tool_calls": "no"}"#, "parallel_tool_calls"),
        ])
    func badChatField(_ json: String, _ param: String) {
        let error = Self.error(.chat, json)
        #expect(error?.status == 400)
        #expect(error?.param == param, "\(error?.message ?? "accepted")")
    }

    static let weather = #"{"type": "function", "function": {"name": "get_weather"}}"#

    @Test("tool_choice: auto by default with tools, none drops them, required or a name")
    func toolChoice() throws {
        let chat = #"{"messages": [{"role": "user", "content": "x"}], "tools": [\#(Self.weather)]"#
        #expect(try Self.parse(.chat, chat + "}").toolChoice == .auto)
        #expect(try Self.parse(.chat, #"{"messages": [{"role": "user", "content": "x"}]}"#)
            .toolChoice == .none)
        let none = try Self.parse(.chat, chat + #", "tool_choice": "none"}"#)
        guard case .chat(_, let tools) = none.input else {
            Issue.record("not a chat")
            return
        }
        #expect(none.toolChoice == .none && tools.isEmpty)
        #expect(try Self.parse(.chat, chat + #", "tool_choice": "required"}"#).toolChoice == .required)
        let named = chat + #", "tool_choice": {"type": "function", "function": {"name": "get_weather"}}}"#
        #expect(try Self.parse(.chat, named).toolChoice == .function("get_weather"))
        #expect(try Self.parse(.chat, chat + "}").parallelToolCalls)
        #expect(try !Self.parse(.chat, chat + #", "parallel_tool_calls": false}"#).parallelToolCalls)
    }

    @Test("completions: echo is taken, echo with logprobs and a suffix are refused by name")
    func echoAndSuffix() throws {
        #expect(try Self.parse(.completions, #"{"prompt": "a", "echo": true}"#).echo)
        #expect(try Self.parse(.completions, #"{"prompt": "a", "suffix": null}"#).echo == false)
        // Neutral values of the fields this server cannot honour pass.
        _ = try Self.parse(
            .completions,
            #"{"prompt": "a", "best_of": 1, "logit_bias": {}, "response_format": {"type": "text"}}"#)
        let both = Self.error(.completions, #"{"prompt": "a", "echo": true, "logprobs": 1}"#)
        #expect(both?.status == 400 && both?.param == "echo")
        let suffix = Self.error(.completions, #"{"prompt": "a", "suffix": "b"}"#)
        #expect(suffix?.status == 400 && suffix?.param == "suffix")
    }
}

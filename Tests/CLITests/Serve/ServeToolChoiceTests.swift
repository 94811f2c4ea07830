import Foundation
import TestSupport
import Testing

/// `tool_choice` on scripted Phi-4-mini-shaped models (see `TinyChatModel.scripted`): "none"
/// offers no tools and parses nothing, "required" and a named function start the answer with
/// the call (the rest is enforced: ServeForcedToolCallTests), and a call cut by `max_tokens`
/// comes back as content.
@Suite("phikit serve: tool_choice", .tags(.slow), .skippedWhenFast)
struct ServeToolChoiceTests {
    static var tool: [String: Any] {
        [
            "type": "function",
            "function": ["name": "get_weather", "parameters": ["type": "object"]],
        ]
    }
    static let messages = [["role": "user", "content": "Weather in Paris?"]]

    static func choice(_ body: [String: Any]) throws -> [String: Any] {
        try #require((body["choices"] as? [[String: Any]])?.first)
    }

    static func calls(_ choice: [String: Any]) -> [[String: Any]] {
        (choice["message"] as? [String: Any])?["tool_calls"] as? [[String: Any]] ?? []
    }

    static func content(_ choice: [String: Any]) -> String? {
        (choice["message"] as? [String: Any])?["content"] as? String
    }

    @Test("none answers in text; required starts the answer with the call")
    func noneAndRequired() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let (_, plain) = try server.post(
            "/v1/chat/completions", ["messages": Self.messages, "temperature": 0])
        let (noneStatus, none) = try server.post(
            "/v1/chat/completions",
            ["messages": Self.messages, "tools": [Self.tool], "tool_choice": "none", "temperature": 0])
        #expect(noneStatus == 200)
        let noneChoice = try Self.choice(none)
        // The tools are not offered (the prompt is the plain one) and the text is not parsed.
        #expect(
            (none["usage"] as? [String: Any])?["prompt_tokens"] as? Int
                == (plain["usage"] as? [String: Any])?["prompt_tokens"] as? Int)
        #expect(Self.content(noneChoice) == TinyChatModel.toolScript)
        #expect(noneChoice["finish_reason"] as? String == "stop" && Self.calls(noneChoice).isEmpty)

        // Left to itself the model says "Let me check." first; required skips to the call.
        let (status, required) = try server.post(
            "/v1/chat/completions",
            ["messages": Self.messages, "tools": [Self.tool], "tool_choice": "required", "temperature": 0])
        #expect(status == 200)
        let choice = try Self.choice(required)
        #expect(choice["finish_reason"] as? String == "tool_calls")
        #expect(Self.content(choice) == nil)
        let function = Self.calls(choice).first?["function"] as? [String: Any]
        #expect(function?["name"] as? String == "get_weather")
        #expect(function?["arguments"] as? String == #"{"city":"Paris"}"#)

        let (unknown, error) = try server.post(
            "/v1/chat/completions",
            [
                "messages": Self.messages, "tools": [Self.tool],
                "tool_choice": ["type": "function", "function": ["name": "get_time"]],
            ])
        #expect(unknown == 400)
        #expect((error["error"] as? [String: Any])?["param"] as? String == "tool_choice")
    }

    @Test("a named function: the model writes its arguments; max_tokens closes a call rather than cutting it")
    func named() throws {
        // This model's answer continues a call's `"arguments":` with `{"city":"Paris"}}]`, the
        // rest of a call: alone it is no call at all.
        let model = try TinyChatModel.scripted(#"Sure": {"city":"Paris"}}]<|/tool_call|>"#)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let named: [String: Any] = ["type": "function", "function": ["name": "get_weather"]]
        let request: [String: Any] = [
            "messages": Self.messages, "tools": [Self.tool], "tool_choice": named, "temperature": 0,
        ]
        let (status, body) = try server.post("/v1/chat/completions", request)
        #expect(status == 200)
        let choice = try Self.choice(body)
        #expect(choice["finish_reason"] as? String == "tool_calls")
        let function = Self.calls(choice).first?["function"] as? [String: Any]
        #expect(function?["name"] as? String == "get_weather")
        #expect(function?["arguments"] as? String == #"{"city":"Paris"}"#)

        let choices = try server.streamedChoices("/v1/chat/completions", request)
        let streamedCalls = choices.compactMap {
            ($0["delta"] as? [String: Any])?["tool_calls"] as? [[String: Any]]
        }.flatMap { $0 }
        #expect(
            (streamedCalls.first?["function"] as? [String: Any])?["name"] as? String == "get_weather")
        #expect(choices.compactMap { $0["finish_reason"] as? String } == ["tool_calls"])

        // Four tokens cannot hold a whole call: a 400 naming max_tokens, with the least that
        // can. At exactly that budget the call is closed in time, not cut.
        let required: [String: Any] = [
            "messages": Self.messages, "tools": [Self.tool], "tool_choice": "required",
            "temperature": 0,
        ]
        let (refused, error) = try server.post(
            "/v1/chat/completions", required.merging(["max_tokens": 4]) { $1 })
        let details = try #require(error["error"] as? [String: Any])
        #expect(refused == 400 && details["param"] as? String == "max_tokens")
        let message = try #require(details["message"] as? String)
        let least = try #require(
            message.firstMatch(of: /at least (\d+)/).flatMap { Int($0.1) }, "\(message)")
        let (_, closed) = try server.post(
            "/v1/chat/completions", required.merging(["max_tokens": least]) { $1 })
        let closedChoice = try Self.choice(closed)
        let call = Self.calls(closedChoice).first?["function"] as? [String: Any]
        #expect(call?["name"] as? String == "get_weather", "\(closedChoice)")
        let arguments = try #require(call?["arguments"] as? String)
        #expect(try JSONSerialization.jsonObject(with: Data(arguments.utf8)) is [String: Any])
    }
}

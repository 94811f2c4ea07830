import Foundation
import TestSupport
import Testing

/// /v1/chat/completions on random-weight Phi-3.5-mini and Phi-4-mini shapes with their real
/// tokenizers and chat templates: answers equal `phikit run`, streaming, the prompt cache,
/// and tools rendered into Phi-4-mini's system message.
@Suite("phikit serve: chat on tiny Phi models", .tags(.slow), .skippedWhenFast)
struct ServeChatTests {
    static func content(_ body: [String: Any]) -> String? {
        ((body["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])?["content"]
            as? String
    }

    static func usage(_ body: [String: Any]) -> [String: Any] {
        body["usage"] as? [String: Any] ?? [:]
    }

    static func cached(_ body: [String: Any]) -> Int? {
        (usage(body)["prompt_tokens_details"] as? [String: Any])?["cached_tokens"] as? Int
    }

    @Test("a greedy chat answer equals phikit run; streamed deltas add up to it",
          arguments: TinyChatModel.allCases)
    func greedy(_ shape: TinyChatModel) throws {
        let model = try shape.write()
        defer { try? FileManager.default.removeItem(at: model) }
        let run = try Phikit.run(
            ["run", model.path, "-p", "Tell me a story", "--system", "Be brief", "-m", "24", "--json"])
        let lone = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let server = try ServeProcess(model.path)
        let messages = [
            ["role": "system", "content": "Be brief"], ["role": "user", "content": "Tell me a story"],
        ]
        let (status, body) = try server.post(
            "/v1/chat/completions",
            ["model": model.lastPathComponent, "messages": messages, "max_tokens": 24, "temperature": 0])
        #expect(status == 200)
        #expect(body["object"] as? String == "chat.completion")
        #expect(Self.content(body) == lone["text"] as? String)
        #expect(Self.usage(body)["prompt_tokens"] as? Int == lone["prompt_tokens"] as? Int)
        #expect(Self.usage(body)["completion_tokens"] as? Int == lone["generation_tokens"] as? Int)
        let finish = (body["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String
        #expect(finish == (lone["stop_reason"] as? String == "eos" ? "stop" : "length"))

        let json: [String: Any] = [
            "messages": messages, "max_tokens": 24, "temperature": 0, "stream": true,
            "logprobs": true, "top_logprobs": 2,
        ]
        let reply = try server.request(
            "POST", "/v1/chat/completions",
            json: String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self))
        let chunks = try reply.chunks()
        let deltas = chunks.compactMap {
            ($0["choices"] as? [[String: Any]])?.first?["delta"] as? [String: Any]
        }
        #expect(deltas.first?["role"] as? String == "assistant")
        #expect(deltas.compactMap { $0["content"] as? String }.joined() == lone["text"] as? String)
        #expect(chunks.allSatisfy { $0["object"] as? String == "chat.completion.chunk" })
        let entries = chunks.flatMap {
            (((($0["choices"] as? [[String: Any]])?.first?["logprobs"] as? [String: Any])?["content"])
                as? [[String: Any]]) ?? []
        }
        #expect(entries.count == lone["generation_tokens"] as? Int)
        #expect(entries.allSatisfy { ($0["top_logprobs"] as? [Any])?.count == 2 })
    }

    @Test("a conversation that goes on reuses its cached prefix; the answer is unchanged")
    func promptCache() throws {
        let model = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path, ["--parallel", "2"])
        var messages: [[String: String]] = [["role": "user", "content": "Hello there, how are you?"]]
        let (_, first) = try server.post(
            "/v1/chat/completions", ["messages": messages, "max_tokens": 12, "temperature": 0])
        #expect(Self.cached(first) == 0)
        let firstPrompt = try #require(Self.usage(first)["prompt_tokens"] as? Int)
        messages.append(["role": "assistant", "content": Self.content(first) ?? ""])
        messages.append(["role": "user", "content": "And then?"])
        let (_, second) = try server.post(
            "/v1/chat/completions", ["messages": messages, "max_tokens": 12, "temperature": 0])
        let cached = try #require(Self.cached(second))
        #expect(cached >= firstPrompt, "the whole first prompt at least")
        // The same request on a fresh server (nothing cached) answers the same.
        let fresh = try ServeProcess(model.path)
        let (_, uncached) = try fresh.post(
            "/v1/chat/completions", ["messages": messages, "max_tokens": 12, "temperature": 0])
        #expect(Self.cached(uncached) == 0)
        #expect(Self.content(uncached) == Self.content(second))
    }

    @Test("tools go into Phi-4-mini's system message; a template without tools refuses them")
    func tools() throws {
        let tool: [String: Any] = [
            "type": "function",
            "function": [
                "name": "get_weather", "description": "Weather in a city",
                "parameters": [
                    "type": "object", "properties": ["city": ["type": "string"]],
                ],
            ],
        ]
        let messages = [["role": "user", "content": "Weather in Paris?"]]
        let phi4 = try TinyChatModel.phi4mini.write()
        defer { try? FileManager.default.removeItem(at: phi4) }
        let server = try ServeProcess(phi4.path)
        let (plainStatus, plain) = try server.post(
            "/v1/chat/completions", ["messages": messages, "max_tokens": 1, "temperature": 0])
        let (status, withTools) = try server.post(
            "/v1/chat/completions",
            ["messages": messages, "tools": [tool], "max_tokens": 1, "temperature": 0])
        #expect(plainStatus == 200 && status == 200)
        let plainTokens = try #require(Self.usage(plain)["prompt_tokens"] as? Int)
        let toolTokens = try #require(Self.usage(withTools)["prompt_tokens"] as? Int)
        // The system message with the tools JSON, as `phikit tokenize --chat` counts it.
        let conversation = try TinyModel.temporaryDirectory().appendingPathComponent("chat.json")
        let functions = #"[{"name": "get_weather", "description": "Weather in a city", "#
            + #""parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}]"#
        try JSONSerialization.data(withJSONObject: [
            ["role": "system", "content": "", "tools": functions],
            ["role": "user", "content": "Weather in Paris?"],
        ]).write(to: conversation)
        let counted = try Phikit.run(["tokenize", phi4.path, "--chat", conversation.path, "--count"])
        #expect(counted.status == 0, "\(counted.stderr)")
        #expect(Int(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == toolTokens)
        #expect(toolTokens > plainTokens + 20)

        let phi35 = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: phi35) }
        let other = try ServeProcess(phi35.path)
        let (refused, error) = try other.post(
            "/v1/chat/completions", ["messages": messages, "tools": [tool]])
        #expect(refused == 400)
        #expect((error["error"] as? [String: Any])?["param"] as? String == "tools")
    }

    @Test("a model's <|tool_call|> answer comes back as tool_calls, streamed and not")
    func toolCalls() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let tool: [String: Any] = [
            "type": "function",
            "function": ["name": "get_weather", "parameters": ["type": "object"]],
        ]
        let request: [String: Any] = [
            "messages": [["role": "user", "content": "Weather in Paris?"]], "tools": [tool],
            "temperature": 0,
        ]
        let (status, body) = try server.post("/v1/chat/completions", request)
        #expect(status == 200)
        let choice = try #require((body["choices"] as? [[String: Any]])?.first)
        #expect(choice["finish_reason"] as? String == "tool_calls")
        let message = try #require(choice["message"] as? [String: Any])
        #expect(message["content"] as? String == "Let me check.")
        let calls = try #require(message["tool_calls"] as? [[String: Any]])
        #expect(calls.count == 1)
        #expect(calls.first?["type"] as? String == "function")
        #expect((calls.first?["id"] as? String)?.hasPrefix("call_") == true)
        let function = try #require(calls.first?["function"] as? [String: Any])
        #expect(function["name"] as? String == "get_weather")
        #expect(function["arguments"] as? String == #"{"city":"Paris"}"#)

        let choices = try server.streamedChoices("/v1/chat/completions", request)
        let deltas = choices.compactMap { $0["delta"] as? [String: Any] }
        #expect(deltas.compactMap { $0["content"] as? String }.joined() == "Let me check.")
        let streamedCalls = deltas.compactMap { $0["tool_calls"] as? [[String: Any]] }.flatMap { $0 }
        #expect(streamedCalls.count == 1 && streamedCalls.first?["index"] as? Int == 0)
        #expect(
            (streamedCalls.first?["function"] as? [String: Any])?["arguments"] as? String
                == #"{"city":"Paris"}"#)
        #expect(choices.compactMap { $0["finish_reason"] as? String } == ["tool_calls"])

        // Without tools in the request, the same answer is plain content, nothing dropped.
        let (_, plain) = try server.post(
            "/v1/chat/completions",
            ["messages": [["role": "user", "content": "Hi"]], "temperature": 0])
        #expect(Self.content(plain) == TinyChatModel.toolScript)
    }
}

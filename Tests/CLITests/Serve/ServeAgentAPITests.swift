import Foundation
import TestSupport
import Testing

/// /v1/responses and /v1/messages on scripted Phi-4-mini-shaped models (see
/// `TinyChatModel.scripted`): tool calls as `function_call` items and `tool_use` blocks,
/// streamed with the event sequences the official SDKs parse; an agent loop's next turn; the
/// one prompt cache the three APIs share; errors in each API's shape.
@Suite("phikit serve: Responses and Anthropic Messages", .tags(.slow), .skippedWhenFast)
struct ServeAgentAPITests {
    static let question = "What is the weather in Paris?"
    static var responsesTool: [String: Any] {[
        "type": "function", "name": "get_weather",
        "parameters": ["type": "object", "properties": ["city": ["type": "string"]]],
    ]}
    static var anthropicTool: [String: Any] {[
        "name": "get_weather",
        "input_schema": ["type": "object", "properties": ["city": ["type": "string"]]],
    ]}
    static var chatTool: [String: Any] {[
        "type": "function",
        "function": [
            "name": "get_weather",
            "parameters": ["type": "object", "properties": ["city": ["type": "string"]]],
        ],
    ]}

    @Test("responses: text then a function_call item, whole and as the event sequence; the next turn")
    func responses() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let request: [String: Any] = [
            "input": Self.question, "tools": [Self.responsesTool], "temperature": 0,
        ]
        let (status, body) = try server.post("/v1/responses", request)
        #expect(status == 200)
        #expect(body["object"] as? String == "response" && body["status"] as? String == "completed")
        let output = body["output"] as? [[String: Any]] ?? []
        #expect(output.map { $0["type"] as? String } == ["message", "function_call"])
        let text = (output.first?["content"] as? [[String: Any]])?.first?["text"] as? String
        #expect(text == "Let me check.")
        let call = output.last ?? [:]
        #expect(call["name"] as? String == "get_weather")
        #expect(call["arguments"] as? String == #"{"city":"Paris"}"#)
        let callID = try #require(call["call_id"] as? String)
        let usage = body["usage"] as? [String: Any] ?? [:]
        #expect((usage["output_tokens"] as? Int ?? 0) > 0)
        #expect((usage["input_tokens_details"] as? [String: Any])?["cached_tokens"] as? Int == 0)

        let events = try server.namedEvents("/v1/responses", request.merging(["stream": true]) { $1 })
        let types = events.map(\.name)
        let deltas = types.filter { $0 == "response.output_text.delta" }.count
        #expect(deltas >= 1)
        #expect(
            types == ["response.created", "response.in_progress", "response.output_item.added",
                      "response.content_part.added"]
                + Array(repeating: "response.output_text.delta", count: deltas)
                + ["response.output_text.done", "response.content_part.done",
                   "response.output_item.done", "response.output_item.added",
                   "response.function_call_arguments.delta", "response.function_call_arguments.done",
                   "response.output_item.done", "response.completed"])
        #expect(events.map { $0.data["sequence_number"] as? Int } == Array(0..<events.count))
        #expect(events.allSatisfy { $0.data["type"] as? String == $0.name })
        let streamedText = events.filter { $0.name == "response.output_text.delta" }
            .compactMap { $0.data["delta"] as? String }.joined()
        #expect(streamedText == "Let me check.")
        let completed = events.last?.data["response"] as? [String: Any] ?? [:]
        #expect((completed["output"] as? [[String: Any]])?.last?["arguments"] as? String == #"{"city":"Paris"}"#)

        // The agent's next turn: the call and its output replayed; the prefix is cached.
        let (next, turn) = try server.post(
            "/v1/responses",
            [
                "input": [
                    ["role": "user", "content": Self.question],
                    ["type": "message", "role": "assistant",
                     "content": [["type": "output_text", "text": "Let me check."]]],
                    ["type": "function_call", "call_id": callID, "name": "get_weather",
                     "arguments": #"{"city":"Paris"}"#],
                    ["type": "function_call_output", "call_id": callID, "output": "sunny"],
                ],
                "tools": [Self.responsesTool], "temperature": 0, "max_output_tokens": 4,
            ])
        #expect(next == 200)
        #expect(turn["status"] as? String == "incomplete")
        #expect((turn["incomplete_details"] as? [String: Any])?["reason"] as? String == "max_output_tokens")
        let cached = ((turn["usage"] as? [String: Any])?["input_tokens_details"] as? [String: Any])?["cached_tokens"] as? Int
        #expect((cached ?? 0) > 0)

        // More than the context leaves generates up to it, as chat completions (issue 27 §6).
        let (tooLong, long) = try server.post(
            "/v1/responses", ["input": "x", "max_output_tokens": 32000, "temperature": 0])
        #expect(tooLong == 200)
        #expect(long["status"] as? String != nil)
        let (refused, error) = try server.post(
            "/v1/responses", ["input": "x", "previous_response_id": "resp_1"])
        #expect(refused == 400)
        let detail = error["error"] as? [String: Any] ?? [:]
        #expect(detail["param"] as? String == "previous_response_id")
        #expect((detail["message"] as? String)?.contains("stateless") == true)
    }

    @Test("messages: text then a tool_use block, whole and as the event sequence; stop_sequence; count_tokens")
    func messages() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let request: [String: Any] = [
            "model": model.lastPathComponent, "max_tokens": 64, "temperature": 0,
            "tools": [Self.anthropicTool], "messages": [["role": "user", "content": Self.question]],
        ]
        let (status, body) = try server.post("/v1/messages", request)
        #expect(status == 200)
        #expect(body["type"] as? String == "message" && body["stop_reason"] as? String == "tool_use")
        let content = body["content"] as? [[String: Any]] ?? []
        #expect(content.map { $0["type"] as? String } == ["text", "tool_use"])
        #expect(content.first?["text"] as? String == "Let me check.")
        #expect(content.last?["name"] as? String == "get_weather")
        #expect((content.last?["input"] as? [String: Any])?["city"] as? String == "Paris")
        let usage = body["usage"] as? [String: Any] ?? [:]

        let (counted, count) = try server.post(
            "/v1/messages/count_tokens",
            request.filter { $0.key != "max_tokens" && $0.key != "temperature" })
        #expect(counted == 200)
        #expect(
            count["input_tokens"] as? Int
                == (usage["input_tokens"] as? Int ?? 0) + (usage["cache_read_input_tokens"] as? Int ?? 0))

        let events = try server.namedEvents("/v1/messages", request.merging(["stream": true]) { $1 })
        let types = events.map(\.name)
        let deltas = types.filter { $0 == "content_block_delta" }.count - 1
        #expect(
            types == ["message_start", "ping", "content_block_start"]
                + Array(repeating: "content_block_delta", count: deltas)
                + ["content_block_stop", "content_block_start", "content_block_delta",
                   "content_block_stop", "message_delta", "message_stop"])
        let toolStart = events.filter { $0.name == "content_block_start" }.last?.data["content_block"] as? [String: Any]
        #expect(toolStart?["type"] as? String == "tool_use" && toolStart?["index"] == nil)
        let json = events.compactMap { ($0.data["delta"] as? [String: Any])?["partial_json"] as? String }
        #expect(json == [#"{"city":"Paris"}"#])
        let delta = events.first { $0.name == "message_delta" }?.data["delta"] as? [String: Any]
        #expect(delta?["stop_reason"] as? String == "tool_use")

        // Without tools the call is text; a stop sequence cuts it and is named.
        let (_, stopped) = try server.post(
            "/v1/messages",
            ["model": model.lastPathComponent, "max_tokens": 64, "temperature": 0,
             "stop_sequences": ["check"], "messages": [["role": "user", "content": Self.question]]])
        #expect(stopped["stop_reason"] as? String == "stop_sequence")
        #expect(stopped["stop_sequence"] as? String == "check")
        #expect(((stopped["content"] as? [[String: Any]])?.first?["text"] as? String) == "Let me ")

        let (missing, error) = try server.post(
            "/v1/messages", ["model": model.lastPathComponent, "messages": [["role": "user", "content": "x"]]])
        #expect(missing == 400)
        #expect(error["type"] as? String == "error")
        #expect((error["error"] as? [String: Any])?["type"] as? String == "invalid_request_error")
        // Claude Code's max_tokens (32,000) is a bound beyond this context: answered.
        let (bounded, bound) = try server.post(
            "/v1/messages",
            ["model": model.lastPathComponent, "max_tokens": 32000, "temperature": 0,
             "messages": [["role": "user", "content": Self.question]]])
        #expect(bounded == 200 && bound["stop_reason"] as? String == "end_turn")
        let (unknown, notFound) = try server.post(
            "/v1/messages",
            ["model": "claude-sonnet-4", "max_tokens": 5, "messages": [["role": "user", "content": "x"]]])
        #expect(unknown == 404)
        #expect((notFound["error"] as? [String: Any])?["type"] as? String == "not_found_error")
    }

    @Test("a greedy answer through either API equals phikit run on the same rendered prompt")
    func greedyEqualsRun() throws {
        let model = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: model) }
        let run = try Phikit.run(
            ["run", model.path, "-p", "Tell me a story", "--system", "Be brief", "-m", "24", "--json"])
        let lone = try #require(
            try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let server = try ServeProcess(model.path)
        let (_, responses) = try server.post(
            "/v1/responses",
            ["instructions": "Be brief", "input": "Tell me a story", "max_output_tokens": 24,
             "temperature": 0])
        let output = (responses["output"] as? [[String: Any]])?.first?["content"] as? [[String: Any]]
        #expect(output?.first?["text"] as? String == lone["text"] as? String)
        #expect((responses["usage"] as? [String: Any])?["input_tokens"] as? Int == lone["prompt_tokens"] as? Int)
        let (_, message) = try server.post(
            "/v1/messages",
            ["model": model.lastPathComponent, "system": "Be brief", "max_tokens": 24, "temperature": 0,
             "messages": [["role": "user", "content": "Tell me a story"]]])
        let text = (message["content"] as? [[String: Any]])?.first?["text"] as? String
        #expect(text == lone["text"] as? String)
        let expectedStop = lone["stop_reason"] as? String == "eos" ? "end_turn" : "max_tokens"
        #expect(message["stop_reason"] as? String == expectedStop)
    }

    @Test("one prompt cache for the three APIs: the same conversation is cached across them")
    func sharedCache() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path, ["--parallel", "1"])
        // Literal bodies: the tools' JSON is rendered into the prompt, so its key order must
        // be the same in the three requests (a Swift dictionary's is not).
        let schema = #""parameters": {"type": "object", "properties": {"city": {"type": "string"}}}"#
        let user = #"{"role": "user", "content": "\#(Self.question)"}"#
        func post(_ path: String, _ body: String) throws -> [String: Any] {
            let reply = try server.request("POST", path, json: body)
            #expect(reply.status == 200, "\(reply.body)")
            return try reply.object()["usage"] as? [String: Any] ?? [:]
        }
        let chat = try post(
            "/v1/chat/completions",
            #"{"messages": [\#(user)], "max_tokens": 2, "tools": [{"type": "function", "#
                + #""function": {"name": "get_weather", \#(schema)}}]}"#)
        let prompt = try #require(chat["prompt_tokens"] as? Int)
        let responses = try post(
            "/v1/responses",
            #"{"input": [\#(user)], "max_output_tokens": 2, "tools": [{"type": "function", "#
                + #""name": "get_weather", \#(schema)}]}"#)
        #expect(responses["input_tokens"] as? Int == prompt)
        #expect((responses["input_tokens_details"] as? [String: Any])?["cached_tokens"] as? Int == prompt - 1)
        let messages = try post(
            "/v1/messages",
            #"{"model": "\#(model.lastPathComponent)", "messages": [\#(user)], "max_tokens": 2, "#
                + #""tools": [{"name": "get_weather", \#(schema.replacingOccurrences(of: "parameters", with: "input_schema"))}]}"#)
        #expect(messages["cache_read_input_tokens"] as? Int == prompt - 1)
        #expect(messages["input_tokens"] as? Int == 1)
    }

    @Test("fleet: /metrics counts every API's tokens, /ready, X-Request-ID echoed and logged as JSON")
    func fleet() throws {
        let model = try TinyChatModel.scripted(TinyChatModel.toolScript)
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path, ["--log-format", "json", "--max-queue", "3"])
        #expect(try server.request("GET", "/ready").status == 200)
        let (_, a) = try server.post("/v1/responses", ["input": "Hi", "max_output_tokens": 3])
        let (_, b) = try server.post(
            "/v1/messages",
            ["model": model.lastPathComponent, "max_tokens": 2, "messages": [["role": "user", "content": "Hi"]]])
        let generated = ((a["usage"] as? [String: Any])?["output_tokens"] as? Int ?? 0)
            + ((b["usage"] as? [String: Any])?["output_tokens"] as? Int ?? 0)
        let page = try server.request("GET", "/metrics")
        #expect(page.status == 200 && page.headers["content-type"]?.hasPrefix("text/plain") == true)
        let samples = Dictionary(
            page.body.split(separator: "\n").filter { !$0.hasPrefix("#") }.compactMap { line in
                line.split(separator: " ").count == 2
                    ? (String(line.split(separator: " ")[0]), Double(line.split(separator: " ")[1]) ?? -1) : nil
            }, uniquingKeysWith: { a, _ in a })
        #expect(samples["llamacpp:tokens_predicted_total"] == Double(generated))
        #expect(samples["phikit_prompt_cache_hits_total"] == 1)  // "Hi" twice, same template
        #expect(samples["llamacpp:requests_processing"] == 0)
        #expect(samples["phikit_requests_finished_total{reason=\"length\"}"] == 2)

        let tagged = try server.request("GET", "/health", headers: [("X-Request-ID", "trace-42")])
        #expect(tagged.headers["x-request-id"] == "trace-42")
        let hostile = try server.request("GET", "/health", headers: [("X-Request-ID", "a b\"c")])
        #expect(hostile.headers["x-request-id"]?.count == 36)
        // the log line is written after the answer is sent: wait for all six requests' lines
        // (on a loaded machine the last one can lag the reply)
        func jsonLines() -> [Substring] { server.stderr.split(separator: "\n").filter { $0.hasPrefix("{") } }
        let deadline = Date().addingTimeInterval(10)
        while jsonLines().count < 6 && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        let lines = jsonLines()
        let entries = lines.compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        #expect(entries.count == lines.count && entries.count >= 5)
        #expect(entries.contains { $0["request_id"] as? String == "trace-42" && $0["status"] as? Int == 200 })
        #expect(entries.contains { ($0["note"] as? String)?.hasPrefix("tokens=") == true })
    }
}

extension ServeProcess {
    /// POSTs `json` and returns the named server-sent events (`event: …` / `data: {…}`).
    func namedEvents(_ path: String, _ json: [String: Any]) throws -> [(name: String, data: [String: Any])] {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        let reply = try request("POST", path, json: body)
        return reply.body.components(separatedBy: "\n\n").compactMap { block in
            let lines = block.split(separator: "\n")
            guard lines.count == 2, lines[0].hasPrefix("event: "), lines[1].hasPrefix("data: "),
                let data = try? JSONSerialization.jsonObject(with: Data(lines[1].dropFirst(6).utf8))
                    as? [String: Any]
            else { return nil }
            return (String(lines[0].dropFirst(7)), data)
        }
    }
}

import Foundation
import Testing

/// `phikit serve` on the bundled base model (stories-260k) through /v1/completions: answers
/// equal `phikit run`, streaming, usage, stop strings, log-probabilities and the errors.
@Suite("phikit serve: completions on stories-260k")
struct ServeCompletionsTests {
    /// `phikit run --json`'s text for `prompt`: what a lone greedy run answers.
    static func lone(_ prompt: String, _ maxTokens: Int, _ extra: [String] = []) throws -> String {
        let r = try Phikit.run(
            ["run", "stories-260k", "-p", prompt, "-m", "\(maxTokens)", "--json"] + extra)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try #require(object?["text"] as? String, "\(r.stderr)")
    }

    @Test("a greedy answer equals phikit run; usage counts the tokens")
    func greedy() throws {
        let server = try ServeProcess("stories-260k")
        let (status, body) = try server.post(
            "/v1/completions",
            ["model": "stories-260k", "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0])
        #expect(status == 200)
        let choice = try #require((body["choices"] as? [[String: Any]])?.first)
        #expect(choice["text"] as? String == (try Self.lone("Once upon a time", 40)))
        #expect(choice["finish_reason"] as? String == "length")
        #expect(body["object"] as? String == "text_completion")
        let usage = try #require(body["usage"] as? [String: Any])
        #expect(usage["prompt_tokens"] as? Int == 5)
        #expect(usage["completion_tokens"] as? Int == 40)
        #expect(usage["total_tokens"] as? Int == 45)
        #expect((usage["prompt_tokens_details"] as? [String: Any])?["cached_tokens"] as? Int == 0)
        #expect(server.stop() == 0)
        #expect(server.accessLog.first?.contains("\"POST /v1/completions\" 200") == true)
        #expect(server.accessLog.first?.contains("tokens=5+40") == true)
    }

    @Test("streaming: chunks that add up to the answer, the usage chunk, then [DONE]")
    func streaming() throws {
        let server = try ServeProcess("stories-260k")
        let reply = try server.request(
            "POST", "/v1/completions",
            json: #"{"prompt": "Once upon a time", "max_tokens": 30, "temperature": 0, "#
                + #""stream": true, "stream_options": {"include_usage": true}}"#)
        #expect(reply.status == 200)
        #expect(reply.headers["content-type"] == "text/event-stream")
        #expect(reply.events.last == "[DONE]")
        let chunks = try reply.chunks()
        let texts = chunks.compactMap { ($0["choices"] as? [[String: Any]])?.first?["text"] as? String }
        #expect(texts.joined() == (try Self.lone("Once upon a time", 30)))
        #expect(texts.count > 10)  // streamed piece by piece
        let finish = chunks.compactMap {
            ($0["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String
        }
        #expect(finish == ["length"])
        let usage = try #require(chunks.last?["usage"] as? [String: Any])
        #expect(usage["completion_tokens"] as? Int == 30)
        #expect((chunks.last?["choices"] as? [Any])?.isEmpty == true)
    }

    @Test(
        "stop strings end the answer before them, also across token boundaries",
        arguments: [
            "Lily", "girl named", "irl named L", "\n",
        ])
    func stopStrings(_ stop: String) throws {
        let server = try ServeProcess("stories-260k")
        let full = try Self.lone("Once upon a time", 80)
        let cut = try #require(full.range(of: stop)).lowerBound
        for stream in [false, true] {
            let json: [String: Any] = [
                "prompt": "Once upon a time", "max_tokens": 80, "temperature": 0,
                "stop": [stop, "never appears"], "stream": stream,
            ]
            let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
            let reply = try server.request("POST", "/v1/completions", json: body)
            let choices =
                stream
                ? try reply.chunks().compactMap { ($0["choices"] as? [[String: Any]])?.first }
                : try #require(reply.object()["choices"] as? [[String: Any]])
            let text = choices.compactMap { $0["text"] as? String }.joined()
            #expect(text == String(full[..<cut]), "stream \(stream)")
            #expect(choices.compactMap { $0["finish_reason"] as? String } == ["stop"])
        }
    }

    @Test("logprobs: one entry per token, the greedy token the likeliest, offsets into the text")
    func logprobs() throws {
        let server = try ServeProcess("stories-260k")
        let (status, body) = try server.post(
            "/v1/completions",
            ["prompt": "Once upon a time", "max_tokens": 12, "temperature": 0, "logprobs": 3])
        #expect(status == 200)
        let choice = try #require((body["choices"] as? [[String: Any]])?.first)
        let text = try #require(choice["text"] as? String)
        let logprobs = try #require(choice["logprobs"] as? [String: Any])
        let tokens = try #require(logprobs["tokens"] as? [String])
        let values = try #require(logprobs["token_logprobs"] as? [Double])
        let top = try #require(logprobs["top_logprobs"] as? [[String: Double]])
        let offsets = try #require(logprobs["text_offset"] as? [Int])
        #expect(tokens.count == 12 && values.count == 12 && top.count == 12)
        #expect(tokens.joined() == text)
        #expect(offsets.first == 0)
        for i in 0..<12 {
            #expect(values[i] <= 0)
            #expect(top[i].count <= 3 && !top[i].isEmpty)
            #expect(top[i].values.max() == values[i], "greedy picks the likeliest")
        }
        let (tooMany, error) = try server.post(
            "/v1/completions", ["prompt": "x", "logprobs": 11])
        #expect(tooMany == 400)
        #expect((error["error"] as? [String: Any])?["param"] as? String == "logprobs")
    }

    @Test("bad requests get OpenAI's error shape with the right status")
    func errors() throws {
        let server = try ServeProcess("stories-260k", ["--max-kv-size", "64"])
        let cases: [(String, String, Int, String?, String)] = [
            ("/v1/completions", #"{"prompt": "#, 400, nil, "parse the JSON"),
            ("/v1/completions", #"[1, 2]"#, 400, nil, "JSON object"),
            ("/v1/completions", #"{"prompt": "x", "max_tokens": "ten"}"#, 400, "max_tokens", "integer"),
            ("/v1/completions", #"{"prompt": "x", "temperature": true}"#, 400, "temperature", "number"),
            ("/v1/completions", #"{"prompt": "x", "stop": 3}"#, 400, "stop", "string"),
            ("/v1/completions", #"{"prompt": "x", "n": 17}"#, 400, "n", "'n'"),
            ("/v1/completions", #"{"prompt": "x", "presence_penalty": 2.5}"#, 400, "presence_penalty", "[-2, 2]"),
            ("/v1/completions", #"{"prompt": 5}"#, 400, "prompt", "prompt"),
            ("/v1/completions", #"{}"#, 400, "prompt", "missing"),
            ("/v1/completions", #"{"model": "gpt-4o", "prompt": "x"}"#, 404, "model", "gpt-4o"),
            (
                "/v1/chat/completions", #"{"messages": [{"role": "user", "content": "hi"}]}"#, 400,
                "messages", "no chat template"
            ),
            ("/v1/nothing", #"{}"#, 404, nil, "Unknown request URL"),
        ]
        for (path, body, status, param, message) in cases {
            let reply = try server.request("POST", path, json: body)
            #expect(reply.status == status, "\(body)")
            let error = try #require(reply.object()["error"] as? [String: Any], "\(body)")
            #expect((error["message"] as? String)?.contains(message) == true, "\(error)")
            #expect(error["param"] as? String == param, "\(body)")
            #expect(error["type"] is String && error.keys.contains("code"))
        }
        // max_tokens beyond what the context leaves: up to the context, then "length".
        let (beyond, answer) = try server.post(
            "/v1/completions", ["prompt": "x", "max_tokens": 100, "temperature": 0])
        #expect(beyond == 200)
        let usage = try #require(answer["usage"] as? [String: Any])
        let finish = (answer["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String
        #expect(usage["prompt_tokens"] as? Int == 3)
        #expect((usage["completion_tokens"] as? Int == 61) == (finish == "length"))
        let long = String(repeating: "word ", count: 100)
        let (status, body) = try server.post("/v1/completions", ["prompt": long])
        #expect(status == 400)
        let message = (body["error"] as? [String: Any])?["message"] as? String ?? ""
        #expect(message.contains("maximum context length is 64 tokens"))
        #expect(message.contains("resulted in 30"))  // never truncated: the counts are told
        #expect(try server.request("GET", "/health").status == 200)
        #expect(try server.request("GET", "/v1/completions").status == 405)
    }

    @Test("n choices (choice i seeded with seed + i, batched) and a list of prompts")
    func choicesAndPromptLists() throws {
        let server = try ServeProcess("stories-260k", ["--parallel", "3"])
        let prompt = "Once upon a time"
        let sampled: [String: Any] = [
            "prompt": prompt, "max_tokens": 12, "temperature": 1, "seed": 5, "n": 3,
        ]
        let (status, body) = try server.post("/v1/completions", sampled)
        #expect(status == 200)
        let choices = try #require(body["choices"] as? [[String: Any]])
        #expect(choices.map { $0["index"] as? Int } == [0, 1, 2])
        let texts = choices.map { $0["text"] as? String ?? "" }
        for (i, text) in texts.enumerated() {
            var alone = sampled
            alone["n"] = 1
            alone["seed"] = 5 + i
            let (_, one) = try server.post("/v1/completions", alone)
            #expect((one["choices"] as? [[String: Any]])?.first?["text"] as? String == text)
        }
        #expect(Set(texts).count > 1)
        let usage = try #require(body["usage"] as? [String: Any])
        #expect(usage["prompt_tokens"] as? Int == 5)  // the prompt once
        #expect(usage["completion_tokens"] as? Int == 36)
        // Streamed: the same texts, by index.
        var streamedBody = sampled
        streamedBody["stream"] = true
        let json = String(
            decoding: try JSONSerialization.data(withJSONObject: streamedBody), as: UTF8.self)
        var streamed = ["", "", ""]
        for chunk in try server.request("POST", "/v1/completions", json: json).chunks() {
            for choice in chunk["choices"] as? [[String: Any]] ?? [] {
                streamed[choice["index"] as? Int ?? 0] += choice["text"] as? String ?? ""
            }
        }
        #expect(streamed == texts)
        // A list of prompts: one greedy answer each, as each alone.
        let (listed, answers) = try server.post(
            "/v1/completions",
            ["prompt": [prompt, "One day"], "max_tokens": 10, "temperature": 0])
        #expect(listed == 200)
        let both = try #require(answers["choices"] as? [[String: Any]])
        #expect(both.map { $0["text"] as? String } == [try Self.lone(prompt, 10), try Self.lone("One day", 10)])
    }

    @Test("presence and frequency penalties change a greedy answer as run's flags do")
    func penalties() throws {
        let server = try ServeProcess("stories-260k")
        let (status, body) = try server.post(
            "/v1/completions",
            [
                "prompt": "Once upon a time", "max_tokens": 40, "temperature": 0,
                "presence_penalty": 1.5, "frequency_penalty": 0.5,
            ])
        #expect(status == 200)
        let text = (body["choices"] as? [[String: Any]])?.first?["text"] as? String
        let flags = ["--presence-penalty", "1.5", "--frequency-penalty", "0.5"]
        #expect(text == (try Self.lone("Once upon a time", 40, flags)))
        #expect(text != (try Self.lone("Once upon a time", 40)))
    }

    @Test("GET /v1/models lists the model; GET / is the chat page")
    func modelsAndPage() throws {
        let server = try ServeProcess("stories-260k")
        let models = try server.request("GET", "/v1/models").object()
        let data = try #require(models["data"] as? [[String: Any]])
        #expect(data.map { $0["id"] as? String } == ["stories-260k"])
        let page = try server.request("GET", "/")
        #expect(page.status == 200)
        #expect(page.headers["content-type"]?.hasPrefix("text/html") == true)
        #expect(page.body.contains("/v1/chat/completions"))
        #expect(!page.body.contains("http://") && !page.body.contains("https://"))
    }
}

import Foundation
import Testing

/// Structured output through `phikit serve`: OpenAI's `response_format`, llama-server's
/// `json_schema` and `grammar`, the Responses API's `text.format` and Anthropic's
/// `output_config.format`, on stories-260k and a tiny random-weight chat model. Answers
/// parse and follow the schema; a keyword the engine cannot enforce, or a max_tokens below
/// the shortest answer, is a 400 naming it.
@Suite("phikit serve: structured output")
struct ServeStructuredOutputTests {
    static let schemaText = #"""
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10},
         "happy": {"type": "boolean"}, "size": {"enum": ["small", "big"]}},
         "required": ["name", "happy", "size"], "additionalProperties": false}
        """#

    static var schema: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(schemaText.utf8))) as? [String: Any] ?? [:]
    }

    /// `text` is an object with exactly the schema's members, of their types.
    static func followsSchema(_ text: String?) -> Bool {
        guard let text,
            let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
        else { return false }
        return Set(object.keys) == ["name", "happy", "size"]
            && (object["name"] as? String).map { $0.count <= 10 } == true
            && object["happy"] is Bool
            && ["small", "big"].contains(object["size"] as? String ?? "")
    }

    static func text(_ body: [String: Any]) -> String? {
        (body["choices"] as? [[String: Any]])?.first?["text"] as? String
    }

    @Test("completions: response_format json_schema equals run --json-schema; json_schema and grammar fields")
    func completions() throws {
        let server = try ServeProcess("stories-260k")
        // As text: the members come in the schema's order, which a dictionary would not keep.
        let body = #"{"prompt": "Once upon a time", "max_tokens": 80, "temperature": 0, "#
            + #""response_format": {"type": "json_schema", "json_schema": "#
            + #"{"name": "kid", "strict": true, "schema": \#(Self.schemaText)}}}"#
        let reply = try server.request("POST", "/v1/completions", json: body)
        #expect(reply.status == 200)
        let answer = Self.text(try reply.object())
        #expect(Self.followsSchema(answer), "\(answer ?? "no text")")
        #expect(try ServeCompletionsTests.lone("Once upon a time", 80, ["--json-schema", Self.schemaText]) == answer)
        let finish = (try reply.object()["choices"] as? [[String: Any]])?.first?["finish_reason"] as? String
        #expect(finish == "stop")

        let (llamaStatus, llama) = try server.post(
            "/v1/completions",
            ["prompt": "Once", "max_tokens": 80, "temperature": 0, "json_schema": Self.schema])
        #expect(llamaStatus == 200 && Self.followsSchema(Self.text(llama)))

        let (grammarStatus, grammar) = try server.post(
            "/v1/completions",
            ["prompt": "Once", "max_tokens": 40, "grammar": #"root ::= ("yes" | "no") "!""#])
        #expect(grammarStatus == 200)
        #expect(["yes!", "no!"].contains(Self.text(grammar) ?? ""))
        #expect(server.stop() == 0)
    }

    @Test("an unsupported keyword, a bad type or two formats is a 400 naming the field")
    func refused() throws {
        let server = try ServeProcess("stories-260k")
        for (format, param, named) in [
            (["response_format": ["type": "json_schema",
              "json_schema": ["name": "x", "schema": ["type": "object", "minProperties": 1]]]],
             "response_format", "minProperties"),
            (["response_format": ["type": "xml"]], "response_format", "xml"),
            (["grammar": "root ::= missing"], "grammar", "missing"),
            (["response_format": ["type": "json_object"], "grammar": #"root ::= "a""#],
             "grammar", "response_format"),
            // The shortest answer (`{"name":"","happy":true,"size":"big"}`) needs 37 tokens at most.
            (["json_schema": Self.schema], "max_tokens", "max_tokens 4"),
        ] as [([String: Any], String, String)] {
            let request = ["prompt": "Once", "max_tokens": 4].merging(format) { $1 }
            let (status, body) = try server.post("/v1/completions", request)
            let error = body["error"] as? [String: Any]
            #expect(status == 400)
            #expect(error?["param"] as? String == param)
            #expect(error?["type"] as? String == "invalid_request_error")
            #expect((error?["message"] as? String)?.contains(named) == true, "\(error ?? [:])")
        }
        #expect(server.stop() == 0)
    }

    @Test("chat, Responses and Anthropic Messages answer JSON that follows the schema")
    func chatAPIs() throws {
        let model = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path)
        let messages = [["role": "user", "content": "Describe a kid"]]

        let (chatStatus, chat) = try server.post(
            "/v1/chat/completions",
            ["messages": messages, "max_tokens": 60, "temperature": 0,
             "response_format": ["type": "json_schema", "json_schema": ["name": "kid", "schema": Self.schema]]])
        #expect(chatStatus == 200)
        let content = ((chat["choices"] as? [[String: Any]])?.first?["message"] as? [String: Any])?["content"]
        #expect(Self.followsSchema(content as? String), "\(content ?? "none")")

        let (responsesStatus, responses) = try server.post(
            "/v1/responses",
            ["input": "Describe a kid", "max_output_tokens": 60, "temperature": 0,
             "text": ["format": ["type": "json_schema", "name": "kid", "schema": Self.schema]]])
        #expect(responsesStatus == 200)
        let output = responses["output"] as? [[String: Any]] ?? []
        let text = (output.first?["content"] as? [[String: Any]])?.first?["text"] as? String
        #expect(Self.followsSchema(text), "\(responses)")
        let echoed = (responses["text"] as? [String: Any])?["format"] as? [String: Any]
        #expect(echoed?["type"] as? String == "json_schema" && echoed?["name"] as? String == "kid")

        let (messagesStatus, anthropic) = try server.post(
            "/v1/messages",
            ["model": model.lastPathComponent, "messages": messages, "max_tokens": 60, "temperature": 0,
             "output_config": ["format": ["type": "json_schema", "schema": Self.schema]]])
        #expect(messagesStatus == 200)
        let block = (anthropic["content"] as? [[String: Any]])?.first?["text"] as? String
        #expect(Self.followsSchema(block), "\(anthropic)")
        #expect(server.stop() == 0)
    }
}

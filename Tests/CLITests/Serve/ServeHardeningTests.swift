import Foundation
import Testing

/// Issue 27 §5 and §6 for `phikit serve`: what a stranger or an OpenAI client notices.
@Suite("phikit serve: hardening")
struct ServeHardeningTests {
    static func errorMessage(_ body: [String: Any]) -> String {
        ((body["error"] as? [String: Any])?["message"] as? String) ?? ""
    }

    @Test("error bodies name the model, not the server's files")
    func errorsNameTheModel() throws {
        let dir = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: dir) }
        // A template that fails while rendering: its error names the template's file.
        try Data("{{ messages[0]['content'] + 1 }}".utf8)
            .write(to: dir.appendingPathComponent("chat_template.jinja"))
        let server = try ServeProcess(dir.path)
        let (status, body) = try server.post(
            "/v1/chat/completions", ["messages": [["role": "user", "content": "Hi"]]])
        #expect(status == 400)
        let message = Self.errorMessage(body)
        #expect(
            message.contains("chat template \(dir.lastPathComponent)/chat_template.jinja, line 1"),
            "\(message)")
        #expect(!message.contains(dir.deletingLastPathComponent().path), "\(message)")
        #expect(server.stop() == 0)
    }

    /// The official client's `models.retrieve(id)`.
    @Test("GET /v1/models/{id}: the model by any of its names; 404 in OpenAI's shape otherwise")
    func retrieveModel() throws {
        let server = try ServeProcess("stories-260k")
        for name in ["stories-260k", "stories%2D260k"] {
            let reply = try server.request("GET", "/v1/models/" + name)
            #expect(reply.status == 200)
            let model = try reply.object()
            #expect(model["id"] as? String == "stories-260k" && model["object"] as? String == "model")
        }
        let unknown = try server.request("GET", "/v1/models/org/gpt-9")
        #expect(unknown.status == 404)
        let error = try #require(try unknown.object()["error"] as? [String: Any])
        #expect(error["code"] as? String == "model_not_found")
        #expect(error["message"] as? String == "The model 'org/gpt-9' does not exist: this server serves 'stories-260k'")
        #expect(server.stop() == 0)
    }

    @Test("--max-body sets the largest request body (413 above it); a bad size is refused")
    func maxBody() throws {
        let server = try ServeProcess("stories-260k", ["--max-body", "1K"])
        let padding = String(repeating: " ", count: 1100)
        let reply = try server.request(
            "POST", "/v1/completions", json: #"{"prompt": "Once", "max_tokens": 1}"# + padding)
        #expect(reply.status == 413)
        let fits = try server.request(
            "POST", "/v1/completions", json: #"{"prompt": "Once", "max_tokens": 1}"#)
        #expect(fits.status == 200)
        #expect(server.stop() == 0)
        let bad = try Phikit.run(["serve", "stories-260k", "--max-body", "lots"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--max-body must be a size"), "\(bad.stderr)")
    }

    @Test("the chat page asks for the key, keeps it in the session, has Stop and New chat")
    func chatPage() throws {
        let server = try ServeProcess("stories-260k", ["--api-key", "sk-page"])
        let page = try server.request("GET", "/")
        #expect(page.status == 200)  // the page itself needs no key
        for needle in [
            "sessionStorage", "this server needs an API key", #"id="stop""#, #"id="newchat""#,
            "AbortController",
        ] {
            #expect(page.body.contains(needle), "\(needle)")
        }
        #expect(!page.body.contains("localStorage"))
        #expect(server.stop() == 0)
    }
}

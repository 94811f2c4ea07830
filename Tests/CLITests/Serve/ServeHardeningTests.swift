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
}

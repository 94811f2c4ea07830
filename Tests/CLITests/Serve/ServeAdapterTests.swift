import Foundation
import TestSupport
import Testing

/// `phikit serve --adapter NAME=DIR`: adapters listed as models, selected per request by
/// `"adapter"` or by `"model"`, an unknown one a 404 naming it, and the options' misuse a
/// usage error; an answer's `"model"` names the adapter that wrote it. (Batching and the prefix cache: PhiServerTests' AdapterSchedulingTests.)
@Suite("phikit serve --adapter")
struct ServeAdapterTests {
    static func text(_ body: [String: Any]) -> String? {
        ((body["choices"] as? [[String: Any]])?.first?["text"] as? String)
    }

    @Test("adapters are listed, chosen by \"adapter\" or \"model\", and an unknown one is 404")
    func perRequestAdapters() throws {
        let work = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let sql = work.appendingPathComponent("sql")
        try TestAdapters.write(to: sql, layers: 0..<5, seed: 3)
        let server = try ServeProcess(
            "stories-260k", ["--adapter", "sql=\(sql.path)", "--no-disk-cache"])
        let models = try server.request("GET", "/v1/models").object()
        let data = try #require(models["data"] as? [[String: Any]])
        #expect(data.map { $0["id"] as? String } == ["stories-260k", "sql"])
        #expect(data[1]["parent"] as? String == "stories-260k")
        #expect(try server.request("GET", "/v1/models/sql").status == 200)

        let ask: [String: Any] = ["prompt": "Once upon a time", "max_tokens": 24, "temperature": 0]
        var byField = ask
        byField["adapter"] = "sql"
        var byModel = ask
        byModel["model"] = "sql"
        let plain = try server.post("/v1/completions", ask)
        let adapted = try server.post("/v1/completions", byField)
        let named = try server.post("/v1/completions", byModel)
        #expect(plain.status == 200 && adapted.status == 200 && named.status == 200)
        #expect(Self.text(adapted.body) != nil && Self.text(adapted.body) == Self.text(named.body))
        #expect(Self.text(adapted.body) != Self.text(plain.body))
        // Each answer names the weights that wrote it (Responses and Messages report the same
        // CompletionHandler.answeringModel; this model has no chat template to reach them).
        #expect(plain.body["model"] as? String == "stories-260k")
        #expect(adapted.body["model"] as? String == "sql" && named.body["model"] as? String == "sql")

        var unknown = ask
        unknown["adapter"] = "poet"
        for path in ["/v1/completions", "/v1/responses", "/v1/messages"] {
            var body = unknown
            if path != "/v1/completions" {
                body = ["model": "stories-260k", "adapter": "poet", "max_tokens": 4, "input": "Hi",
                        "messages": [["role": "user", "content": "Hi"]]]
                if path == "/v1/responses" { body["messages"] = nil } else { body["input"] = nil }
            }
            let reply = try server.post(path, body)
            #expect(reply.status == 404, "\(path)")
            let error = try #require(reply.body["error"] as? [String: Any], "\(path)")
            #expect((error["message"] as? String)?.contains("The adapter 'poet' does not exist") == true, "\(path)")
        }
        let openAI = try server.post("/v1/completions", unknown)
        let error = try #require(openAI.body["error"] as? [String: Any])
        #expect(error["code"] as? String == "adapter_not_found" && error["param"] as? String == "adapter")
        #expect(server.stop() == 0)
    }

    @Test("--adapter without NAME=DIR, or with --adapter-path, is a usage error")
    func misuseIsUsageError() throws {
        let bad = try Phikit.run(["serve", "stories-260k", "--adapter", "just-a-dir"])
        #expect(bad.status == 64 && bad.stderr.contains("--adapter takes NAME=DIR"), "\(bad.stderr)")
        let both = try Phikit.run(
            ["serve", "stories-260k", "--adapter-path", "a", "--adapter", "b=c"])
        #expect(both.status == 64 && both.stderr.contains("give one or the other"), "\(both.stderr)")
    }
}

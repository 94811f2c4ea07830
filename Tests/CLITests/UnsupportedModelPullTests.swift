import Foundation
import Testing

/// Issue 20: `pull` and `run` of a model whose `model_type` phikit cannot run fetch
/// config.json first and refuse before any weight moves; `--include` still fetches anything.
@Suite("pull and run refuse an unsupported model_type before the weights")
struct UnsupportedModelPullTests {
    /// A Hub repo of a model phikit has no loader for: config.json, tokenizer, 1 MB weights.
    private func foreignModelHub() throws -> HubServerProcess {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }  // the server keeps the bytes
        try TinyModel.writeJSON(
            ["model_type": "gpt2", "n_layer": 1, "n_embd": 8, "vocab_size": 16],
            to: dir.appendingPathComponent("config.json"))
        try Data("{}".utf8).write(to: dir.appendingPathComponent("tokenizer.json"))
        try Data(HubServerProcess.weights).write(
            to: dir.appendingPathComponent("model.safetensors"))
        return try HubServerProcess(model: dir)
    }

    private func weightRequests(_ hub: HubServerProcess) -> [String] {
        hub.requests.map(\.path).filter { $0.hasSuffix("model.safetensors") }
    }

    @Test func pullAndRunRefuseBeforeTheWeights() throws {
        let hub = try foreignModelHub()
        for command in [["pull", "org/model"], ["run", "org/model", "-p", "hi"]] {
            let r = try Hostile.run(command, environment: hub.environment)
            #expect(r.status == 65, "\(command): \(r.stderr)")
            #expect(
                r.stderr.contains("\nerror: 'org/model' is a model_type 'gpt2' model"),
                "\(r.stderr)")
            // What it does run, from the engine's registry (not a list written here).
            #expect(r.stderr.contains("'phi3'"), "\(r.stderr)")
            #expect(r.stderr.contains("--include"), "\(r.stderr)")
            #expect(weightRequests(hub).isEmpty, "\(hub.requests.map(\.path))")
            #expect(hub.requests.contains { $0.path.hasSuffix("/config.json") })
        }
        #expect(!FileManager.default.fileExists(atPath: hub.snapshot + "/model.safetensors"))

        // Named on purpose, any file comes.
        let all = try Hostile.run(
            ["pull", "org/model", "--include", "*"], environment: hub.environment)
        #expect(all.status == 0, "\(all.stderr)")
        let weights = try Data(
            contentsOf: URL(fileURLWithPath: hub.snapshot + "/model.safetensors"))
        #expect(Array(weights) == HubServerProcess.weights)
    }
}

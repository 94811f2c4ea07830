import Foundation
import TestSupport
import Testing

/// `serve --cache-dir`: a prompt computed by one server process is restored by the next one
/// (usage.prompt_tokens_details.cached_tokens) with the same greedy answer; another KV width
/// or --no-disk-cache does not reuse it.
@Suite("phikit serve: the prompt cache on disk", .tags(.slow), .skippedWhenFast)
struct ServeDiskCacheTests {
    @Test("after a restart the same prompt is restored from disk and answered the same")
    func survivesRestart() throws {
        let model = try TinyChatModel.phi35.write()
        defer { try? FileManager.default.removeItem(at: model) }
        let cacheDir = try TinyModel.temporaryDirectory().appendingPathComponent("kv-cache").path
        let options = ["--cache-dir", cacheDir, "--cache-min-tokens", "16"]
        let request: [String: Any] = [
            "messages": [
                ["role": "system", "content": "You are a careful assistant who answers briefly."],
                ["role": "user", "content": "Tell me a short story about a lighthouse keeper."],
            ],
            "max_tokens": 10, "temperature": 0,
        ]
        func ask(_ extra: [String] = []) throws -> (answer: String?, prompt: Int?, cached: Int?) {
            let server = try ServeProcess(model.path, options + extra)
            let (status, body) = try server.post("/v1/chat/completions", request)
            #expect(status == 200)
            let metrics = try server.request("GET", "/metrics").body
            let restored = ServeChatTests.cached(body) ?? 0
            if extra.contains("--no-disk-cache") {
                #expect(!metrics.contains("phikit_disk_cache_hits_total"))
            } else {
                #expect(metrics.contains("phikit_disk_cache_hits_total \(restored > 0 ? 1 : 0)\n"))
                #expect(metrics.contains("phikit_disk_cache_tokens_total \(restored)\n"))
                #expect(metrics.contains("phikit_disk_cache_bytes "))
            }
            #expect(server.stop() == 0)
            #expect(!server.stderr.contains("warning"), "\(server.stderr)")
            return (
                ServeChatTests.content(body),
                ServeChatTests.usage(body)["prompt_tokens"] as? Int, ServeChatTests.cached(body)
            )
        }
        let first = try ask()
        #expect(first.cached == 0)
        let prompt = try #require(first.prompt)
        #expect(prompt >= 16)
        let files = try FileManager.default.subpathsOfDirectory(atPath: cacheDir)
            .filter { $0.hasSuffix(".kv") }
        #expect(files.count == 1)

        let second = try ask()
        #expect(second.cached == prompt - 1, "all but the last prompt token, from disk")
        #expect(second.answer == first.answer)

        #expect(try ask(["--kv-bits", "32"]).cached == 0)
        #expect(try ask(["--no-disk-cache"]).cached == 0)
    }
}

import Foundation
import Testing

/// `phikit chat --load` with the disk prefix cache: a saved conversation resumed in a new
/// process starts from the KV cache the first process wrote, and answers exactly as without it.
@Suite("phikit chat: a loaded conversation resumes from the disk cache")
struct ChatDiskCacheCLITests {
    @Test("the resumed conversation's prompt comes from disk; the answer is unchanged")
    func resumes() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let cache = ["--cache-dir", dir.appendingPathComponent("kv-cache").path,
                     "--cache-min-tokens", "8", "--stats"]
        let (turns, first) = try ChatCLITests.chat(
            dir, ["Hello there, tell me about the sea"], ChatCLITests.greedy + cache)
        #expect(first.status == 0, "\(first.stderr)")
        try #require(turns.count == 1)
        let saved = dir.appendingPathComponent("turn0.json").path

        func resume(_ extra: [String]) throws -> (answer: String, reused: Int?) {
            let r = try Phikit.run(
                ["chat", dir.path, "--load", saved] + ChatCLITests.greedy + extra, stdin: "Why?\n")
            #expect(r.status == 0, "\(r.stderr)")
            #expect(!r.stderr.contains("warning"), "\(r.stderr)")
            return (r.stdout, ChatCLITests.promptFigures(r.stderr).first?.reused)
        }
        let fromDisk = try resume(cache)
        let cold = try resume(["--no-disk-cache", "--stats"])
        #expect(cold.reused == 0)
        let reused = try #require(fromDisk.reused)
        #expect(reused > 8, "the first turn's prompt, restored")
        #expect(fromDisk.answer == cold.answer)
    }
}

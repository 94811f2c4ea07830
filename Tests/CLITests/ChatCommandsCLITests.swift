import Foundation
import Testing

/// Issue 27 §5: what the chat says about itself — `/set` lists every setting, `/stats`
/// toggles, `--load` says what it read.
@Suite("phikit chat: settings, stats, load")
struct ChatCommandsCLITests {
    @Test("/set lists every setting; /stats turns the figures on and off; --load reports")
    func commands() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("earlier.json")
        let earlier: [[String: Any]] = [
            ["role": "system", "content": "Be brief."], ["role": "user", "content": "Hello"],
            ["role": "assistant", "content": "Hi."],
        ]
        try JSONSerialization.data(withJSONObject: earlier).write(to: file)
        let input = "/set\nOne\n/stats\nTwo\n/stats\nThree\n"
        let r = try Phikit.run(
            ["chat", dir.path, "--load", file.path, "-m", "3", "--temp", "0"], stdin: input)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("(loaded 3 messages from \(file.path))"))
        #expect(
            r.stderr.contains(
                "temp 0.0, top_p 1.0, top_k 0, min_p 0.0, max_tokens 3, repetition_penalty none, "
                    + "repetition_context_size 20, presence_penalty 0.0, frequency_penalty 0.0, seed none"),
            "\(r.stderr)")
        // The first /stats shows the last answer's figures; the second answer has its own; the
        // second /stats turns them off, so the third answer has none.
        let figures = r.stderr.split(separator: "\n").filter { $0.hasPrefix("prompt ") }
        #expect(figures.count == 2, "\(r.stderr)")
        #expect(r.stderr.contains("(figures follow each answer from now on; /stats turns them off)"))
        #expect(r.stderr.contains("(no more figures after the answers; /stats turns them on again)"))
    }

    /// Issue 27: `--load` of 8,000 messages took minutes. What is kept is what fits, newest
    /// first, and the answer is the one `run --chat` gives on it from scratch.
    @Test("--load of 8,000 messages keeps the newest turns that fit and answers")
    func loadsALongConversation() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("long.json")
        let messages: [[String: Any]] = (0..<8_000).map {
            ["role": $0 % 2 == 0 ? "user" : "assistant", "content": "short message \($0)"]
        }
        try JSONSerialization.data(withJSONObject: messages).write(to: file)
        let saved = dir.appendingPathComponent("kept.json").path
        let arguments = ["--temp", "0", "-m", "4", "--max-kv-size", "256"]
        let r = try Phikit.run(
            ["chat", dir.path, "--load", file.path] + arguments,
            stdin: "Hello there\n/save \(saved)\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("(loaded 8000 messages from"))
        let kept = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: saved)))
                as? [[String: Any]])
        #expect(r.stderr.contains("dropped the \(8_000 - (kept.count - 2)) oldest messages"))
        #expect(kept.count > 4 && kept.first?["role"] as? String == "user")
        #expect(kept[kept.count - 2]["content"] as? String == "Hello there")
        let answer = try #require(kept.last?["content"] as? String)
        let fresh = try ChatCLITests.freshAnswer(dir, Array(kept.dropLast()), arguments)
        #expect(fresh == answer)
    }
}

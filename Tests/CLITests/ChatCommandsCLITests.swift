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
                    + "repetition_context_size 20, seed none"), "\(r.stderr)")
        // The first /stats shows the last answer's figures; the second answer has its own; the
        // second /stats turns them off, so the third answer has none.
        let figures = r.stderr.split(separator: "\n").filter { $0.hasPrefix("prompt ") }
        #expect(figures.count == 2, "\(r.stderr)")
        #expect(r.stderr.contains("(figures follow each answer from now on; /stats turns them off)"))
        #expect(r.stderr.contains("(no more figures after the answers; /stats turns them on again)"))
    }
}

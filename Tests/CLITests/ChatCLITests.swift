import Foundation
import Testing

/// `phikit chat` driven through a pipe: each greedy answer equals `phikit run --chat` on the
/// same conversation from scratch (so the reused KV cache is exactly a fresh prefill), across
/// a context trim and across LongRoPE's switch to the long factors; the slash commands; stop
/// strings.
@Suite("phikit chat (pipe)")
struct ChatCLITests {
    struct Turn {
        var conversation: [[String: Any]]  // up to and including the user message
        var answer: String
    }

    /// Runs a chat with `messages` and a `/save` after each, and returns each turn's
    /// conversation and answer, as saved.
    static func chat(
        _ dir: URL, _ messages: [String], _ arguments: [String]
    ) throws -> (turns: [Turn], result: PhikitResult) {
        var input = ""
        for (i, message) in messages.enumerated() {
            input += message + "\n/save " + dir.appendingPathComponent("turn\(i).json").path + "\n"
        }
        let r = try Phikit.run(["chat", dir.path] + arguments, stdin: input)
        var turns: [Turn] = []
        for i in messages.indices {
            let url = dir.appendingPathComponent("turn\(i).json")
            guard let data = try? Data(contentsOf: url),
                var saved = try JSONSerialization.jsonObject(with: data) as? [[String: Any]],
                saved.last?["role"] as? String == "assistant"
            else { continue }
            let answer = saved.removeLast()["content"] as? String ?? ""
            turns.append(Turn(conversation: saved, answer: answer))
        }
        return (turns, r)
    }

    /// `phikit run --chat` on `conversation`, from scratch: its answer.
    static func freshAnswer(
        _ dir: URL, _ conversation: [[String: Any]], _ arguments: [String]
    ) throws -> String {
        let file = dir.appendingPathComponent("fresh.json")
        try JSONSerialization.data(withJSONObject: conversation).write(to: file)
        let r = try Phikit.run(["run", dir.path, "--chat", file.path] + arguments)
        #expect(r.status == 0, "run --chat: \(r.stderr)")
        // run ends its output with a line break unless the answer did.
        return r.stdout.hasSuffix("\n") ? String(r.stdout.dropLast()) : r.stdout
    }

    static func expectFreshEquality(
        _ dir: URL, _ turns: [Turn], _ arguments: [String], _ label: String
    ) throws {
        for (n, turn) in turns.enumerated() {
            let fresh = try freshAnswer(dir, turn.conversation, arguments)
            let answer = turn.answer.hasSuffix("\n") ? String(turn.answer.dropLast()) : turn.answer
            #expect(fresh == answer, "\(label) turn \(n + 1)")
        }
    }

    /// `prompt 26 tokens (9 new, 17 reused)` → (26, 17), one per answer.
    static func promptFigures(_ stderr: String) -> [(total: Int, reused: Int)] {
        stderr.split(separator: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard words.count > 5, words[0] == "prompt", let total = Int(words[1]),
                let reused = Int(words[5])
            else { return nil }
            return (total, reused)
        }
    }

    static let greedy = ["--temp", "0", "-m", "8"]

    @Test(
        "turn N equals run --chat from scratch, and reuses the cache",
        arguments: [ChatTinyModel.phi35, .phi4mini])
    func turnsEqualFreshRuns(_ model: ChatTinyModel) throws {
        let dir = try model.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let messages = ["Hello there", "\"\"\"\nTell me\na story\n\"\"\"", "Why?"]
        let (turns, r) = try Self.chat(dir, messages, Self.greedy + ["--stats"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        try #require(turns.count == 3)
        #expect(turns[1].conversation.last?["content"] as? String == "Tell me\na story")
        // No prompt, no colours: each answer and a blank line.
        let expected = turns.map {
            $0.answer.hasSuffix("\n") ? $0.answer + "\n" : $0.answer + "\n\n"
        }
        #expect(r.stdout == expected.joined())
        try Self.expectFreshEquality(dir, turns, Self.greedy, "\(model)")
        let figures = Self.promptFigures(r.stderr)
        try #require(figures.count == 3, "stderr: \(r.stderr)")
        #expect(figures[0].reused == 0)
        #expect(figures[1].reused > 0 && figures[2].reused > figures[1].reused, "\(figures)")
    }

    @Test("the oldest turns are dropped to fit, never the system message; still exact")
    func contextTrim() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let arguments = Self.greedy + ["--system", "Be brief.", "--max-kv-size", "48"]
        let messages = ["Hello there", "What is the capital of France?", "And of Italy, please?"]
        let (turns, r) = try Self.chat(dir, messages, arguments + ["--stats"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        try #require(turns.count == 3)
        #expect(r.stderr.contains("oldest messages to fit the context of 48 tokens"))
        let last = turns[2].conversation
        #expect(last.first?["content"] as? String == "Be brief.")
        #expect(last.count < 6)  // system, [older turns], the new message
        try Self.expectFreshEquality(dir, turns, Self.greedy, "trim")
    }

    /// original_max_position_embeddings 48: the conversation grows past it (a fresh run then
    /// uses the long factors everywhere), then a trim brings it back under (short factors).
    @Test("LongRoPE: crossing original_max_position_embeddings and back stays exact")
    func longRopeSwitch() throws {
        let model = ChatTinyModel.phi35LongRope
        let dir = try model.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let arguments = ["--temp", "0", "-m", "10", "--max-kv-size", "72"]
        let messages = ["Hello there", "Tell me more", "Go on", "And then?", "Why?"]
        let (turns, r) = try Self.chat(dir, messages, arguments + ["--stats"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        try #require(turns.count == 5)
        let figures = Self.promptFigures(r.stderr)
        #expect(figures.contains { $0.total > 48 }, "\(figures)")
        #expect(r.stderr.contains("oldest messages"))
        try Self.expectFreshEquality(dir, turns, ["--temp", "0", "-m", "10"], "longrope")
    }

    @Test("slash commands run locally; an unknown one is a hint and nothing is sent")
    func slashCommands() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let saved = dir.appendingPathComponent("after-reset.json").path
        let input = """
            /help
            /x
            /set temp warm
            /set top_k 5
            Hello there
            /reset
            /system Be brief.
            /system
            /set temp 0
            Hi
            /save \(saved)
            /bye
            Never sent

            """
        let r = try Phikit.run(["chat", dir.path, "-m", "6", "--temp", "0.9"], stdin: input)
        #expect(r.status == 64, "a refused command makes a piped chat end with 64")
        #expect(r.stderr.contains("/reset, /clear"))
        #expect(r.stderr.contains("error: unknown command '/x'"))
        #expect(r.stderr.contains("hint: type /help for the commands; nothing was sent"))
        #expect(r.stderr.contains("'warm' is not a value for temp"))
        #expect(r.stderr.contains("system: Be brief."))
        let data = try Data(contentsOf: URL(fileURLWithPath: saved))
        let conversation = try #require(
            try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(conversation.map { $0["role"] as? String } == ["system", "user", "assistant"])
        #expect(conversation[1]["content"] as? String == "Hi")
        let answer = try #require(conversation[2]["content"] as? String)
        // top_k 5 and temp 0 are greedy: the answer after /reset is a fresh run's.
        let fresh = try Self.freshAnswer(
            dir, Array(conversation.prefix(2)), ["--temp", "0", "-m", "6"])
        #expect(fresh == answer)
        // two answers, each followed by a blank line (the sampled first one may hold blank
        // lines of its own)
        #expect(r.stdout.components(separatedBy: "\n\n").count >= 3)
        #expect(r.stdout.contains(answer))
    }

    @Test("a message longer than the context is refused with its length; the chat goes on")
    func messageTooLong() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let long = String(repeating: "the cat sat on the mat ", count: 10)
        let r = try Phikit.run(
            ["chat", dir.path, "-m", "4", "--temp", "0", "--max-kv-size", "32"],
            stdin: long + "\nHi\n")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: the message is "))
        #expect(r.stderr.contains("tokens with the template, but the context holds 32"))
        #expect(r.stdout.hasSuffix("\n\n") && !r.stdout.isEmpty)  // "Hi" was answered
    }

    @Test("--stop ends the answer before the stop string, in chat and in run")
    func stopStrings() throws {
        let dir = try ChatTinyModel.phi35.directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let conversation: [[String: Any]] = [["role": "user", "content": "Hello there"]]
        let arguments = ["--temp", "0", "-m", "12"]
        let full = try Self.freshAnswer(dir, conversation, arguments)
        try #require(full.count > 12, "answer: \(full)")
        // A stop string from the middle of the answer, likely across a token boundary.
        let start = full.index(full.startIndex, offsetBy: 5)
        let stop = String(full[start..<full.index(start, offsetBy: 4)])
        let before = String(full[..<full.range(of: stop)!.lowerBound])
        let run = try Self.freshAnswer(dir, conversation, arguments + ["--stop", stop])
        #expect(run == before)
        let (turns, r) = try Self.chat(dir, ["Hello there"], arguments + ["--stop", stop])
        #expect(r.status == 0)
        #expect(turns.first?.answer == before)
        #expect(!r.stdout.contains(stop))
    }

    @Test("run --chat takes the conversation alone")
    func runChatConflicts() throws {
        let r = try Phikit.run(["run", "stories-260k", "--chat", "x.json", "-p", "Hi"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--chat takes the conversation alone"))
    }
}

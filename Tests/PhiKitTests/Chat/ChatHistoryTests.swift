import Foundation
import PhiEngine
import PhiFormats
import PhiText
import Testing

@testable import PhiKit

/// The conversation: trimming oldest turns first, /save and /load, and /set and the other
/// slash commands.
@Suite("chat history and commands")
struct ChatHistoryTests {
    private func history(_ turns: Int, system: String? = "Be brief.") -> ChatHistory {
        var h = ChatHistory(system: system)
        for i in 1...turns {
            h.append(role: "user", content: "question \(i)")
            h.append(role: "assistant", content: "answer \(i)")
        }
        return h
    }

    @Test func dropsOldestTurnsButNeverTheSystemOrTheNewMessage() {
        var h = history(2)
        h.append(role: "user", content: "question 3")
        #expect(h.dropOldestTurn() == 2)
        #expect(h.messages.map(\.content) == ["Be brief.", "question 2", "answer 2", "question 3"])
        #expect(h.dropOldestTurn() == 2)
        #expect(h.messages.map(\.content) == ["Be brief.", "question 3"])
        #expect(h.dropOldestTurn() == 0)
    }

    /// Issue 27: `--load` of 8,000 messages took minutes, measuring the whole rest after each
    /// dropped turn. The search keeps what dropping one turn at a time kept, and measures
    /// little more than the conversation once.
    @Test(arguments: [8_000, 2_001, 7, 2])
    func dropsOldestTurnsInLinearWork(messages: Int) {
        var h = ChatHistory(system: "Be brief.")
        for i in 0..<messages {
            // Uneven turns: some answers come in two messages, some turns have no answer.
            let role = i % 5 == 4 ? "assistant" : (i % 2 == 0 ? "user" : "assistant")
            h.append(role: role, content: String(repeating: "w", count: 1 + i % 13))
        }
        h.append(role: "user", content: "the new message")
        for budget in [50, 400, 3_000, 1_000_000] {
            func size(_ kept: ChatHistory) -> Int {
                kept.messages.reduce(0) { $0 + $1.content.count + 4 }
            }
            // What dropping one turn at a time keeps: the first turn start from which the
            // rest fits (sizes from the end, in one pass), else the newest turn alone.
            var fromEnd = [Int](repeating: 0, count: h.entries.count + 1)
            for i in h.entries.indices.reversed() {
                fromEnd[i] = fromEnd[i + 1] + h.entries[i].message.content.count + 4
            }
            let systemSize = "Be brief.".count + 4
            let starts = h.entries.indices.dropFirst().filter { h.entries[$0].message.role == "user" }
            let expectedDropped =
                systemSize + fromEnd[0] <= budget
                ? 0 : (starts.first { systemSize + fromEnd[$0] <= budget } ?? starts.last!)
            let expected = ChatHistory(
                system: h.system, entries: Array(h.entries[expectedDropped...]))
            var measured = 0
            var actual = h
            let (dropped, measure) = actual.dropOldestTurns { kept in
                measured += kept.messages.count
                return (size(kept) <= budget, size(kept))
            }
            #expect(actual == expected, "budget \(budget)")
            #expect(dropped == expectedDropped && measure == size(expected))
            // The whole once, then a few measurements of at most twice what is kept.
            let kept = expected.messages.count
            #expect(measured <= h.messages.count + 64 * (kept + 2), "measured \(measured)")
        }
    }

    @Test func savesAndLoadsWithTheCutMark() throws {
        var h = history(1)
        h.append(role: "user", content: "tell me 🤖\nall")
        h.append(role: "assistant", content: "Once upon", isCut: true)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("chat.json").path
        try h.save(to: path)
        #expect(try ChatHistory.load(from: path) == h)
        // What tokenize --chat reads: role and content, plus a field templates ignore.
        let values = try ChatPrompt.conversation(fromFile: path)
        #expect(values.count == 5)
        #expect(values[0]["role"]?.stringValue == "system")
        #expect(values[4]["cut"]?.boolValue == true)
        #expect(values[3]["cut"] == nil)
        // Only the files the chat wrote: no temporary left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["chat.json"])
    }

    @Test func saveReplacesOnlyRegularFilesAndEarlierConversations() throws {
        let h = history(1)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        func path(_ name: String) -> String { dir.appendingPathComponent(name).path }

        // A FIFO, a symlink (even to a conversation) and a directory stay what they are.
        #expect(mkfifo(path("fifo"), 0o600) == 0)
        try h.save(to: path("chat.json"))
        try FileManager.default.createSymbolicLink(
            atPath: path("link.json"), withDestinationPath: path("chat.json"))
        try FileManager.default.createDirectory(
            atPath: path("folder"), withIntermediateDirectories: false)
        for (name, kind) in [
            ("fifo", "a FIFO"), ("link.json", "a symbolic link"), ("folder", "a directory"),
        ] {
            #expect(throws: ChatSaveError.notRegularFile(path: path(name), kind: kind)) {
                try h.save(to: path(name), force: true)
            }
        }
        // A device is refused before anything is written (checked without writing, so a
        // regression cannot replace the machine's /dev/null).
        #expect(throws: ChatSaveError.notRegularFile(path: "/dev/null", kind: "a character device"))
        {
            try ChatSaveTarget.check("/dev/null", force: true)
        }
        var info = stat()
        #expect(lstat(path("fifo"), &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
        #expect(lstat(path("link.json"), &info) == 0 && info.st_mode & S_IFMT == S_IFLNK)

        // A file that is not a conversation is kept, unless forced.
        let notes = Data("my notes, not a chat\n".utf8)
        try notes.write(to: URL(fileURLWithPath: path("notes.txt")))
        #expect(throws: ChatSaveError.notAConversation(path: path("notes.txt"))) {
            try h.save(to: path("notes.txt"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("notes.txt"))) == notes)
        try h.save(to: path("notes.txt"), force: true)
        #expect(try ChatHistory.load(from: path("notes.txt")) == h)

        // An earlier conversation and an empty file are replaced without asking.
        var longer = h
        longer.append(role: "user", content: "more")
        try longer.save(to: path("chat.json"))
        #expect(try ChatHistory.load(from: path("chat.json")) == longer)
        #expect(FileManager.default.createFile(atPath: path("empty.json"), contents: Data()))
        try h.save(to: path("empty.json"))
        #expect(try ChatHistory.load(from: path("empty.json")) == h)
        #expect(ChatSaveError.notAConversation(path: "n.txt").hint == "/save --force n.txt replaces it")
    }

    @Test func loadRefusesMessagesWithoutText() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("bad.json").path
        try Data(#"[{"role": "user", "content": [1]}]"#.utf8).write(to: URL(fileURLWithPath: path))
        #expect(
            throws: ChatPromptError.invalidConversation(
                path: path, detail: "message 1 has no string 'content'")
        ) {
            try ChatHistory.load(from: path)
        }
    }

    @Test func parsesSlashCommands() throws {
        #expect(try SlashCommand.parse("/help") == .help)
        #expect(try SlashCommand.parse("/clear") == .reset)
        #expect(try SlashCommand.parse("/system  Be terse. ") == .system("Be terse."))
        #expect(try SlashCommand.parse("/set temp 0.7") == .set(name: "temp", value: "0.7"))
        #expect(try SlashCommand.parse("/set") == .showSettings)
        #expect(try SlashCommand.parse("/save my chat.json") == .save(path: "my chat.json"))
        #expect(try SlashCommand.parse("/save --force a.json") == .save(path: "a.json", force: true))
        #expect(try SlashCommand.parse("/save --forceful") == .save(path: "--forceful"))
        #expect(throws: SlashCommandError.missingArgument(command: "/save --force", what: "a file name")) {
            try SlashCommand.parse("/save --force ")
        }
        #expect(throws: SlashCommandError.unknown("/sav")) { try SlashCommand.parse("/sav x") }
        #expect(throws: SlashCommandError.missingArgument(command: "/load", what: "a file name")) {
            try SlashCommand.parse("/load")
        }
    }

    @Test func setChecksValuesAsRunDoes() throws {
        var p = GenerationParameters(maxTokens: 1024, temperature: 0.6)
        try ChatSetting.apply("temp", "0", to: &p)
        try ChatSetting.apply("top-p", "0.9", to: &p)
        try ChatSetting.apply("max_tokens", "12", to: &p)
        try ChatSetting.apply("seed", "7", to: &p)
        try ChatSetting.apply("presence_penalty", "0.5", to: &p)
        try ChatSetting.apply("frequency-penalty", "-1", to: &p)
        #expect(p.temperature == 0 && p.topP == 0.9 && p.maxTokens == 12 && p.seed == 7)
        #expect(p.presencePenalty == 0.5 && p.frequencyPenalty == -1)
        let before = p
        #expect(throws: SlashCommandError.self) { try ChatSetting.apply("top_p", "2", to: &p) }
        #expect(
            throws: SlashCommandError.invalidValue(
                name: "presence_penalty", value: "3", rule: "presence_penalty must be in [-2, 2]")
        ) { try ChatSetting.apply("presence_penalty", "3", to: &p) }
        #expect(throws: SlashCommandError.self) { try ChatSetting.apply("temp", "warm", to: &p) }
        #expect(throws: SlashCommandError.unknownSetting("tmp")) {
            try ChatSetting.apply("tmp", "1", to: &p)
        }
        #expect(p == before)
        try ChatSetting.apply("repetition_penalty", "1.1", to: &p)
        #expect(p.repetitionPenalty == 1.1)
        try ChatSetting.apply("repetition_penalty", "none", to: &p)
        #expect(p.repetitionPenalty == nil)
        // /set alone: every setting, also those not in use.
        for name in [
            "temp", "top_p", "top_k", "min_p", "max_tokens", "repetition_penalty",
            "repetition_context_size", "seed",
        ] {
            #expect(ChatSetting.describe(p).contains(name + " "), "\(name)")
        }
    }
}

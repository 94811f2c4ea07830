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
    }
}

import Foundation
import PhiFormats
import PhiText
import TestSupport
import Testing

@testable import PhiKit

/// `tokenize --chat` and `run` render a conversation with the model's template and encode it
/// without the tokenizer's added special tokens; goldens from
/// scripts/tokenizer/make_chat_prompt_golden.py (transformers + tokenizers).
@Suite("chat prompt")
struct ChatPromptTests {
    struct Golden: Decodable {
        struct Case: Decodable {
            var model: String
            var conversation: [[String: String]]
            var text: String
            var ids: [Int]
        }
        var cases: [Case]
    }

    static let golden: Golden = {
        let url = Bundle.module.resourceURL!.appendingPathComponent(
            "Fixtures/chat_prompt/golden.json")
        return try! JSONDecoder().decode(Golden.self, from: Data(contentsOf: url))
    }()

    @Test("conversations render and encode as apply_chat_template(tokenize=True)")
    func matchesReference() throws {
        #expect(Self.golden.cases.count == 6)
        for c in Self.golden.cases {
            let file = try ConvertFixtures.temporaryDirectory("chat").appendingPathComponent(
                "conversation.json")
            defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
            try JSONEncoder().encode(c.conversation).write(to: file)
            let model = try TestPaths.shared(c.model)
            let result = try tokenizeChat(model: model, conversationFile: file.path)
            #expect(result.text == c.text, "\(c.model)")
            #expect(result.ids == c.ids, "\(c.model): \(c.conversation)")
        }
    }

    @Test("a base model has no template; bad conversation files are usage errors")
    func refusals() throws {
        let dir = try ConvertFixtures.temporaryDirectory("chat")
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.json")
        try Data(#"[{"role": "user", "content": "Hi"}]"#.utf8).write(to: good)
        let stories = TestPaths.storiesModel.path
        #expect(throws: ChatPromptError.noChatTemplate(directory: stories)) {
            try tokenizeChat(model: stories, conversationFile: good.path)
        }
        for (name, text) in [("empty", "[]"), ("roleless", #"[{"content": "x"}]"#), ("bad", "[")] {
            let file = dir.appendingPathComponent(name + ".json")
            try Data(text.utf8).write(to: file)
            #expect {
                try ChatPrompt.conversation(fromFile: file.path)
            } throws: { error in
                (error as? ChatPromptError)?.exitCode == .usage
            }
        }
        #expect {
            try ChatPrompt.conversation(fromFile: dir.path + "/none.json")
        } throws: { error in
            (error as? FileError)?.exitCode == .noInput
        }
        // LocalFile's checks: a FIFO is refused at once (reading it would wait for a writer).
        let fifo = dir.path + "/fifo.json"
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect {
            try ChatPrompt.conversation(fromFile: fifo)
        } throws: { error in
            (error as? FileError)?.wrongType == "a FIFO"
        }
    }
}

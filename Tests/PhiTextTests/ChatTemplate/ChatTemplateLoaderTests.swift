import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiText

/// ChatTemplate.load against what transformers' AutoTokenizer makes of the same directories
/// (scripts/chat_template/make_loader_golden.py): which template wins, which special tokens
/// the template sees.
@Suite("ChatTemplate.load finds the template and special tokens as transformers does")
struct ChatTemplateLoaderTests {
    static let root = ChatTemplateFixtures.directory.appendingPathComponent("loader")
    static let expected: JSONValue = try! JSONValue(
        parsing: try! Data(contentsOf: root.appendingPathComponent("expected.json")))

    @Test(arguments: expected.objectValue!.map(\.key))
    func scenario(_ name: String) throws {
        let want = Self.expected[name]!
        let directory = Self.root.appendingPathComponent(name).path
        if let source = want["template"]?.stringValue {
            let template = try #require(try ChatTemplate.load(modelDirectory: directory))
            #expect(template.source == source)
            #expect(template.name == "default")
            let tokens = Dictionary(
                uniqueKeysWithValues: want["special_tokens"]!.objectValue!.map {
                    ($0.key, $0.value.stringValue!)
                })
            #expect(template.specialTokens == tokens)
        } else if name == "no-template" {
            #expect(try ChatTemplate.load(modelDirectory: directory) == nil)
        } else {
            #expect(throws: ChatTemplateError.self) {
                try ChatTemplate.load(modelDirectory: directory)
            }
        }
    }

    @Test("a base model without a template (the bundled stories-260k) loads as nil")
    func baseModelHasNoTemplate() throws {
        let directory = try TestPaths.shared("karpathy--stories260K-phi3")
        #expect(FileManager.default.fileExists(atPath: directory + "/tokenizer_config.json"))
        #expect(try ChatTemplate.load(modelDirectory: directory) == nil)
        #expect(try ChatTemplate.load(modelDirectory: "/nonexistent/phikit-model") == nil)
    }

    @Test("a broken tokenizer_config.json is a bad-model-data error naming the file")
    func brokenConfig() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/tokenizer_config.json"
        try Data("{\"chat_template\": ".utf8).write(to: URL(fileURLWithPath: config))
        do {
            _ = try ChatTemplate.load(modelDirectory: directory)
            Issue.record("loaded a truncated tokenizer_config.json")
        } catch {
            #expect(error.exitCode == .dataError)
            #expect(error.message.hasPrefix(config + ": not valid JSON"))
        }
        try Data("{\"chat_template\": 42}".utf8).write(to: URL(fileURLWithPath: config))
        #expect(
            throws: ChatTemplateError.invalidConfig(
                path: config,
                message: "chat_template must be a string or a list of {name, template}")
        ) {
            try ChatTemplate.load(modelDirectory: directory)
        }
        try Data([0x7B, 0x7D]).write(to: URL(fileURLWithPath: config))
        try Data([0x7B, 0x7B, 0xFF, 0x7D, 0x7D]).write(
            to: URL(fileURLWithPath: directory + "/chat_template.jinja"))
        #expect(
            throws: ChatTemplateError.invalidConfig(
                path: directory + "/chat_template.jinja", message: "not valid UTF-8")
        ) {
            try ChatTemplate.load(modelDirectory: directory)
        }
    }

    @Test("a template that does not parse fails at load, naming its file and line")
    func unparsableTemplateFailsAtLoad() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/chat_template.jinja"
        try Data("{% for m in messages %}\n{{ m.content | shout }}\n{% endfor %}".utf8)
            .write(to: URL(fileURLWithPath: path))
        #expect(
            throws: ChatTemplateError.syntax(
                template: path, message: "no filter named 'shout'", line: 2, column: 16)
        ) {
            try ChatTemplate.load(modelDirectory: directory)
        }
    }

    private func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-chat-template-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiText

/// The chat-template golden file (scripts/chat_template/make_golden.py) and the real tokenizer
/// directories in Tests/Fixtures, which tests read in place.
enum ChatTemplateFixtures {
    static let directory: URL = Bundle.module.resourceURL!.appendingPathComponent(
        "Fixtures/chat_template")

    static let golden: JSONValue = {
        let data = try! Data(contentsOf: directory.appendingPathComponent("golden.json"))
        return try! JSONValue(parsing: data)
    }()

    static var templateIDs: [String] {
        golden["templates"]!.objectValue!.map(\.key)
    }

    static func cases(for template: String) -> [JSONValue] {
        golden["cases"]!.arrayValue!.filter { $0["template"]?.stringValue == template }
    }

    /// The time `strftime_now` saw when the goldens were made (a local wall-clock time).
    static var now: Date {
        let text = golden["now"]!.stringValue!  // 2025-03-09T14:05:06
        let parts = text.split(whereSeparator: { "-T:".contains($0) }).map { Int($0)! }
        let components = DateComponents(
            year: parts[0], month: parts[1], day: parts[2], hour: parts[3], minute: parts[4],
            second: parts[5])
        return Calendar(identifier: .gregorian).date(from: components)!
    }

    /// The template as phikit loads it: from the model directory, or from its text with the
    /// special tokens of its model.
    static func template(_ id: String) throws -> ChatTemplate {
        let entry = golden["templates"]![id]!
        var template: ChatTemplate
        if let dir = entry["model_dir"]?.stringValue {
            template = try #require(
                try ChatTemplate.load(modelDirectory: try TestPaths.shared(dir)))
        } else {
            let url = directory.appendingPathComponent("templates/" + entry["file"]!.stringValue!)
            let source = String(decoding: try Data(contentsOf: url), as: UTF8.self)
            template = try ChatTemplate(source: source, name: id, specialTokens: specialTokens(id))
        }
        let fixed = now
        template.now = { fixed }
        return template
    }

    /// `tokenizer.special_tokens_map` as transformers reported it.
    static func specialTokens(_ id: String) -> [String: String] {
        let members = golden["templates"]![id]!["special_tokens"]!.objectValue!
        return Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.value.stringValue!) })
    }
}

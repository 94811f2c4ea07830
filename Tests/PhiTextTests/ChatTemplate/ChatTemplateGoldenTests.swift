import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// Every case of golden.json: the real Phi-3/3.5/4-mini templates and the common templates of
/// other families, over the conversation set (system or not, multi-turn, unicode, empty and
/// whitespace content, tool calls, wrong role order…) with add_generation_prompt off and on.
/// phikit's render must equal transformers' byte for byte, and fail where it fails —
/// with the template's own message when the template called raise_exception.
@Suite("chat templates render exactly as transformers' apply_chat_template")
struct ChatTemplateGoldenTests {
    @Test(arguments: ChatTemplateFixtures.templateIDs)
    func template(_ id: String) throws {
        let template = try ChatTemplateFixtures.template(id)
        let cases = ChatTemplateFixtures.cases(for: id)
        #expect(!cases.isEmpty)
        for golden in cases { check(template, golden) }
    }

    @Test("the loader reads the special tokens transformers passes to the template")
    func loadedSpecialTokens() throws {
        for id in ChatTemplateFixtures.templateIDs {
            guard ChatTemplateFixtures.golden["templates"]![id]!["model_dir"] != nil else {
                continue
            }
            let template = try ChatTemplateFixtures.template(id)
            #expect(template.specialTokens == ChatTemplateFixtures.specialTokens(id), "\(id)")
        }
    }

    private func check(_ template: ChatTemplate, _ golden: JSONValue) {
        let conversationName = golden["conversation"]!.stringValue!
        let conversation = ChatTemplateFixtures.golden["conversations"]![conversationName]!
            .arrayValue!
        let agp = golden["add_generation_prompt"]!.boolValue!
        let extra = Dictionary(
            uniqueKeysWithValues: (golden["extra"]?.objectValue ?? []).map { ($0.key, $0.value) })
        let label =
            "\(template.name) · \(conversationName) · agp=\(agp) · extra=\(extra.keys.sorted())"
        let result = Result { () throws(ChatTemplateError) -> String in
            try template.render(
                conversation: conversation, addGenerationPrompt: agp, extraContext: extra)
        }
        switch result {
        case .success(let text):
            if let expected = golden["expected"]?.stringValue {
                #expect(text == expected, "\(label)\n\(firstDifference(text, expected))")
            } else {
                Issue.record(
                    "\(label): rendered, but transformers failed with \(golden["raised"] ?? golden["error"]!)"
                )
            }
        case .failure(let error):
            if let raised = golden["raised"]?.stringValue {
                guard case .raised(_, let message, _) = error else {
                    Issue.record(
                        "\(label): expected raise_exception(\(raised)), got \(error.message)")
                    return
                }
                #expect(message == raised, "\(label)")
            } else if golden["error"] != nil {
                if case .raised = error { Issue.record("\(label): \(error.message)") }
            } else {
                Issue.record("\(label): \(error.message)")
            }
        }
    }

    /// Where two renders diverge, with a little context, for readable failures.
    private func firstDifference(_ a: String, _ b: String) -> String {
        let x = Array(a.unicodeScalars)
        let y = Array(b.unicodeScalars)
        let i = zip(x, y).prefix { $0 == $1 }.count
        func around(_ s: [Unicode.Scalar]) -> String {
            String(String.UnicodeScalarView(s[max(0, i - 30)..<min(s.count, i + 30)]))
                .debugDescription
        }
        return "first difference at scalar \(i): got \(around(x)), want \(around(y))"
    }
}

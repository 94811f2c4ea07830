import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// The interpreter piece by piece: each snippet of snippets.json (whitespace control,
/// literals, operators, undefined values, loops and scoping, namespaces, macros, filters,
/// tests, string methods, tojson, globals, runtime and syntax errors) against what Jinja
/// renders in transformers' environment (scripts/chat_template/make_snippet_golden.py).
/// Errors must happen where Jinja's happen, on the same template line.
@Suite("Jinja snippets behave as in transformers' environment")
struct JinjaSnippetTests {
    static let golden: JSONValue = {
        let url = ChatTemplateFixtures.directory.appendingPathComponent("snippets.json")
        return try! JSONValue(parsing: try! Data(contentsOf: url))
    }()

    static var snippets: [String] {
        golden["snippets"]!.arrayValue!.map { $0["template"]!.stringValue! }
    }

    @Test(arguments: snippets)
    func snippet(_ source: String) throws {
        let golden = Self.golden["snippets"]!.arrayValue!.first {
            $0["template"]?.stringValue == source
        }!
        let context = Self.golden["context"]!.objectValue!
        let fixed = ChatTemplateFixtures.now
        let result = Result { () throws -> String in
            let nodes = try JinjaParser.parse(source)
            let renderer = JinjaRenderer(
                context: Dictionary(
                    uniqueKeysWithValues: context.map { ($0.key, JinjaValue($0.value)) }),
                now: { fixed })
            return try renderer.render(nodes)
        }
        switch result {
        case .success(let text):
            let expected = golden["expected"]?.stringValue
            #expect(expected != nil, "rendered \(text.debugDescription), Jinja failed: \(golden)")
            if let expected { #expect(text == expected) }
        case .failure(let failure):
            guard let error = failure as? JinjaError else {
                Issue.record("unexpected error type: \(failure)")
                return
            }
            check(error, against: golden)
        }
    }

    private func check(_ error: JinjaError, against golden: JSONValue) {
        let pythonLine = golden["line"]?.intValue ?? golden["syntax"]?.intValue
        if let raised = golden["raised"]?.stringValue {
            #expect(error.kind == .raised && error.message == raised, "\(error)")
            #expect(error.line == pythonLine)
        } else if golden["syntax"] != nil {
            #expect(error.kind == .syntax, "Jinja: syntax error; phikit: \(error)")
            if let pythonLine { #expect(error.line == pythonLine, "\(error)") }
        } else if golden["error"] != nil {
            #expect(error.kind != .raised, "\(error)")
            // Jinja fails some things at render time that phikit refuses while parsing
            // (include/extends); lines are compared for render-time errors.
            if error.kind == .render, let pythonLine {
                #expect(error.line == pythonLine, "\(error)")
            }
        } else {
            Issue.record("phikit failed (\(error)), Jinja rendered \(golden["expected"]!)")
        }
    }
}

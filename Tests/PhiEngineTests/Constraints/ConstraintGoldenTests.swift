import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// The compilers against Python's judges (scripts/structured/make_golden.py): for every
/// suite schema, nothing the matcher accepts is invalid for `jsonschema`, and the compact
/// instance is accepted; for every regular expression and grammar, the matcher accepts
/// exactly what Python's `re` (or the reference parser) accepts.
@Suite("constraint goldens")
struct ConstraintGoldenTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/structured")

    static func load(_ name: String) throws -> [JSONValue] {
        let bytes = try Array(Data(contentsOf: directory.appendingPathComponent(name)))
        return try JSONValue(parsing: bytes).arrayValue ?? []
    }

    static func cases(_ entry: JSONValue) -> [(text: String, expected: Bool)] {
        (entry["cases"]?.arrayValue ?? []).compactMap { pair in
            guard let p = pair.arrayValue, let text = p.first?.stringValue, let ok = p.last?.boolValue
            else { return nil }
            return (text, ok)
        }
    }

    @Test("suite schemas: accepted ⇒ valid for jsonschema, and the compact instance is accepted")
    func schemas() throws {
        let entries = try Self.load("schemas.json")
        #expect(entries.count >= 50)
        for entry in entries {
            let name = entry["name"]?.stringValue ?? "?"
            let grammar = try OutputFormat.jsonSchema(entry["schema"]!).compile()
            let matcher = GrammarMatcher(grammar: grammar, vocabulary: ConstraintCompileTests.bytesVocabulary)
            let cases = Self.cases(entry)
            #expect(matcher.accepts(Array(cases[0].text.utf8)), "\(name): \(cases[0].text)")
            for (text, valid) in cases where matcher.accepts(Array(text.utf8)) {
                #expect(valid, "\(name) accepts the invalid \(text)")
            }
        }
    }

    @Test("suite regexes and grammars accept exactly what the Python reference does")
    func grammars() throws {
        let entries = try Self.load("grammars.json")
        #expect(entries.count >= 10)
        for entry in entries {
            let name = entry["name"]?.stringValue ?? "?"
            let source = entry["source"]?.stringValue ?? ""
            let format: OutputFormat = entry["kind"]?.stringValue == "regex" ? .regex(source) : .grammar(source)
            let matcher = GrammarMatcher(grammar: try format.compile(), vocabulary: ConstraintCompileTests.bytesVocabulary)
            for (text, expected) in Self.cases(entry) {
                #expect(matcher.accepts(Array(text.utf8)) == expected, "\(name): \(text.debugDescription)")
            }
        }
    }
}

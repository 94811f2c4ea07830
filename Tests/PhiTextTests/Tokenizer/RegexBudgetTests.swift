import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// Issue 17: a tokenizer.json regex with nested quantifiers, against a long input, overflowed
/// the stack or backtracked for ever. The matcher is bounded (`RegexBudget`) and encode says
/// so, as HF tokenizers stops with a retry-limit error.
@Suite("tokenizer regex budget")
struct RegexBudgetTests {
    /// stories-260k's tokenizer with a `Split` pre-tokenizer on `pattern`.
    private func tokenizer(splittingOn pattern: String) throws -> Tokenizer {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k/tokenizer.json")
        var json = try JSONValue(parsing: try Data(contentsOf: url))
        json.set(
            "pre_tokenizer",
            .object([
                ("type", .string("Split")), ("pattern", .object([("Regex", .string(pattern))])),
                ("behavior", .string("Isolated")), ("invert", .bool(false)),
            ]))
        return try Tokenizer(tokenizerJSON: Array(json.serialized().utf8), source: "test")
    }

    @Test(
        "nested quantifiers on a long input stop with an error, in bounded time",
        arguments: [
            ("(a*)*b", String(repeating: "a", count: 300) + "c"),
            ("(?:ab)+", String(repeating: "ab", count: 5000)),
        ])
    func pathological(pattern: String, text: String) throws {
        let t = try tokenizer(splittingOn: pattern)
        let start = Date()
        #expect(throws: TokenizerError.regexBudgetExceeded(path: "test")) { try t.encode(text) }
        #expect(Date().timeIntervalSince(start) < 60)
    }

    @Test("an ordinary pattern within the budget encodes as before")
    func ordinary() throws {
        let t = try tokenizer(splittingOn: "(?:ab)+| ")
        #expect(try !t.encode("abab ab x").isEmpty)
    }

    /// Found by the regex fuzzer (scripts/fuzz/regressions/regex/fuzz-class-ends-with-
    /// backslash.bin): a class cut off after its backslash read past the end of the pattern.
    @Test(arguments: [#"[^\"#, #"[a-\"#, #"[\"#, #"\"#, #"(?:[ab\"#])
    func patternEndingInBackslashIsRefused(_ pattern: String) {
        #expect(throws: RegexParser.Unsupported.self) { try RegexParser.parse(pattern) }
    }
}

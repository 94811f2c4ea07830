import Foundation
import Testing

@testable import PhiText

/// Issue 17: one JSON policy for every file a model brings. tokenizer.json is read by its own
/// scanner (too big for a JSON tree); it refuses what `JSONValue` refuses for config.json —
/// a key given twice, a byte-order mark, a number with a leading zero — and a vocabulary token
/// too long for the tokenizer's table is an error, not a trap.
@Suite("tokenizer.json follows the one JSON policy")
struct TokenizerJSONPolicyTests {
    private static let original: String = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k/tokenizer.json")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }()

    /// The bundled tokenizer.json with the first `target` replaced.
    private static func edited(_ target: String, _ replacement: String) -> [UInt8] {
        Array(
            original.replacingOccurrences(
                of: target, with: replacement, range: original.range(of: target)
            ).utf8)
    }

    static let refused: [(what: String, bytes: [UInt8], says: String)] = [
        (
            "duplicate top-level key", edited("\"version\"", "\"padding\": null, \"version\""),
            "duplicate key \"padding\""
        ),
        (
            "duplicate model key", edited("\"vocab\": {", "\"type\": \"BPE\", \"vocab\": {"),
            "duplicate key \"type\""
        ),
        (
            "duplicate vocabulary token", edited("\"<0x00>\": 3,", "\"<0x00>\": 3, \"<s>\": 9999,"),
            "duplicate key \"<s>\""
        ),
        ("byte-order mark", [0xEF, 0xBB, 0xBF] + Array(original.utf8), "invalid JSON at byte 0"),
        ("leading zero in an id", edited("\"<0x00>\": 3,", "\"<0x00>\": 03,"), "invalid number"),
        (
            "a 70,000-byte vocabulary token",
            edited(
                "\"<0x00>\": 3,",
                "\"<0x00>\": 3, \"" + String(repeating: "a", count: 70_000)
                    + "\": 9999,"), "a vocabulary token of 70000 bytes"
        ),
    ]

    @Test(arguments: refused)
    func refusedWithAnError(_ c: (what: String, bytes: [UInt8], says: String)) throws {
        #expect(!Self.original.isEmpty)
        do {
            _ = try Tokenizer(tokenizerJSON: c.bytes, source: "tokenizer.json")
            Issue.record("\(c.what): accepted")
        } catch let error as TokenizerError {
            #expect(error.exitCode == .dataError, "\(c.what)")
            #expect(error.message.contains(c.says), "\(c.what): \(error.message)")
        }
    }

    @Test func theUneditedFileLoads() throws {
        _ = try Tokenizer(tokenizerJSON: Array(Self.original.utf8), source: "tokenizer.json")
    }
}

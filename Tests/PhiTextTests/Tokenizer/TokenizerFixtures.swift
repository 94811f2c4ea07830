import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiText

/// The tokenizers under test, the corpus and the golden files made by
/// scripts/tokenizer/make_golden.py from the `tokenizers` library.
enum TokenizerFixtures {
    /// Golden-file name → tokenizer.json path (in Tests/Fixtures, or the bundled model);
    /// a missing fixture throws `MissingFixture`.
    static func path(_ name: String) throws -> String {
        switch name {
        case "phi35": try TestPaths.shared("microsoft--Phi-3.5-mini-instruct/tokenizer.json")
        case "phi4mini":
            try TestPaths.shared("_derived/microsoft--Phi-4-mini-instruct/tokenizer.json")
        case "stories260k": TestPaths.storiesModel.appendingPathComponent("tokenizer.json").path
        case "phi3early": try TestPaths.shared("ort-extensions-testdata--phi-3/tokenizer.json")
        case "phi2like":
            try #require(
                Bundle.module.url(
                    forResource: "Fixtures/tokenizer/phi2like-tokenizer.json", withExtension: nil)
            ).path
        default: throw MissingFixture(path: "tokenizer '\(name)'")
        }
    }
    static let names = ["phi35", "phi4mini", "stories260k", "phi3early", "phi2like"]

    /// Loading the 200k-token tokenizer takes a while in a debug build: load each once.
    private static let tokenizers = OncePerKey<Tokenizer>()

    static func tokenizer(_ name: String) throws -> Tokenizer {
        try tokenizers.value(name) {
            let path = try path(name)
            let data = try Data(contentsOf: URL(fileURLWithPath: path))
            return try Tokenizer(tokenizerJSON: data, source: path)
        }
    }

    /// `tokenizer(name).encode(text)` of every corpus text, computed once per process: the
    /// encode, decode and streaming goldens all start from these ids (encoding the corpus is
    /// most of their time in a debug build).
    static func encodedCorpus(_ name: String) throws -> [[Int]] {
        try encodings.value(name) {
            let tokenizer = try tokenizer(name)
            return try corpus.map { try tokenizer.encode($0) }
        }
    }
    private static let encodings = OncePerKey<[[Int]]>()

    static func fixture(_ name: String) throws -> Data {
        let url = try #require(
            Bundle.module.url(forResource: "Fixtures/tokenizer/" + name, withExtension: nil))
        return try Data(contentsOf: url)
    }

    /// The corpus, one text per line (JSON strings).
    static let corpus: [String] = {
        guard let data = try? fixture("corpus.jsonl") else { return [] }
        return data.split(separator: 0x0A, omittingEmptySubsequences: true).map { line in
            (try? JSONValue(parsing: line))?.stringValue ?? "<unreadable corpus line>"
        }
    }()

    struct Golden {
        struct Entry {
            var count: Int
            var hash: String
            var ids: [Int]?
            var decoded: ExpectedText
            var skipped: ExpectedText
        }
        var entries: [Entry]
        var decodeCases: [(ids: [Int], text: String, skipped: String)]
    }

    static func golden(_ name: String) throws -> Golden {
        let json = try JSONValue(parsing: try fixture("golden-\(name).json"))
        let entries = try #require(json["entries"]?.arrayValue).map { item -> Golden.Entry in
            let a = item.arrayValue ?? []
            return Golden.Entry(
                count: a[0].intValue ?? -1, hash: a[1].stringValue ?? "",
                ids: a[2].arrayValue?.compactMap(\.intValue), decoded: ExpectedText(a[3]),
                skipped: ExpectedText(a[4]))
        }
        let cases = try #require(json["decode_cases"]?.arrayValue).map { item in
            let a = item.arrayValue ?? []
            return (
                ids: a[0].arrayValue?.compactMap(\.intValue) ?? [], text: a[1].stringValue ?? "",
                skipped: a[2].stringValue ?? ""
            )
        }
        return Golden(entries: entries, decodeCases: cases)
    }

    /// What a decode should give: the text itself, a string, or the hash of a long string.
    enum ExpectedText {
        case input
        case text(String)
        case hash(String)

        init(_ value: JSONValue) {
            if let s = value.stringValue {
                self = .text(s)
            } else if let h = value["h"]?.stringValue {
                self = .hash(h)
            } else {
                self = .input
            }
        }

        func matches(_ decoded: String, input: String) -> Bool {
            switch self {
            case .input: decoded == input
            case .text(let s): decoded == s
            case .hash(let h): TokenizerFixtures.hash(bytes: Array(decoded.utf8)) == h
            }
        }

        func describe(input: String) -> String {
            switch self {
            case .input: "\"\(preview(input))\" (the text)"
            case .text(let s): "\"\(preview(s))\""
            case .hash(let h): "a text with hash \(h)"
            }
        }
    }

    /// FNV-1a 64 over the ids as little-endian UInt32, as make_golden.py computes it.
    static func hash(_ ids: [Int]) -> String {
        hash(
            bytes: ids.flatMap { id in
                let v = UInt32(truncatingIfNeeded: id)
                return [
                    UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24),
                ]
            })
    }

    static func hash(bytes: [UInt8]) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01B3 }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}

/// A short, escaped rendering of a text for failure messages.
func preview(_ text: String, limit: Int = 120) -> String {
    let escaped = text.unicodeScalars.map { s -> String in
        switch s {
        case "\n": "\\n"
        case "\t": "\\t"
        case "\r": "\\r"
        default:
            s.value < 0x20 || s.value == 0x7F ? "\\u{\(String(s.value, radix: 16))}" : String(s)
        }
    }.joined()
    return escaped.count > limit ? String(escaped.prefix(limit)) + "…" : escaped
}

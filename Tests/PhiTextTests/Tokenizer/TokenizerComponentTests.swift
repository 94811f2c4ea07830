import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// Every normalizer, pre-tokenizer, model option, added-token option, post-processor and
/// decoder, each in a small tokenizer, against the `tokenizers` library
/// (scripts/tokenizer/make_component_golden.py writes components.json).
@Suite("Tokenizer components match tokenizers")
struct TokenizerComponentTests {
    struct Variant: CustomTestStringConvertible, Sendable {
        var name: String
        var json: JSONValue
        var testDescription: String { name }
    }

    static let golden: JSONValue? = {
        guard let data = try? TokenizerFixtures.fixture("components.json") else { return nil }
        return try? JSONValue(parsing: data)
    }()

    static var variants: [Variant] {
        (golden?["variants"]?.arrayValue ?? []).map {
            Variant(name: $0["name"]?.stringValue ?? "?", json: $0)
        }
    }

    /// The variant's tokenizer.json: its base with the top-level and model members replaced.
    static func tokenizer(_ v: JSONValue) throws -> Tokenizer {
        let baseName = try #require(v["base"]?.stringValue)
        let baseData =
            baseName == "base-sp.json"
            ? try Data(contentsOf: URL(fileURLWithPath: try TokenizerFixtures.path("stories260k")))
            : try TokenizerFixtures.fixture(baseName)
        var spec = try JSONValue(parsing: baseData)
        for (key, value) in v["replace"]?.objectValue ?? [] { spec.set(key, value) }
        var model = try #require(spec["model"])
        for (key, value) in v["model"]?.objectValue ?? [] { model.set(key, value) }
        spec.set("model", model)
        return try Tokenizer(tokenizerJSON: Array(spec.serialized().utf8), source: baseName)
    }

    @Test(arguments: variants)
    func variantMatches(_ variant: Variant) throws {
        let v = variant.json
        let tokenizer = try Self.tokenizer(v)
        let texts = (Self.golden?["texts"]?.arrayValue ?? []).map { $0.stringValue ?? "" }
        let ids = try #require(v["ids"]?.arrayValue)
        let plain = try #require(v["ids_plain"]?.arrayValue)
        let skipped = try #require(v["skipped"]?.arrayValue)
        let decoded = try #require(v["decoded"]?.arrayValue)
        try #require(ids.count == texts.count)
        var failures: [String] = []
        for (i, text) in texts.enumerated() {
            let want = ids[i].arrayValue?.compactMap(\.intValue) ?? []
            let got = try tokenizer.encode(text)
            if got != want {
                failures.append("\"\(preview(text))\": got \(got), expected \(want)")
                continue
            }
            let wantPlain = plain[i].arrayValue?.compactMap(\.intValue) ?? want
            if try tokenizer.encode(text, addSpecialTokens: false) != wantPlain {
                failures.append(
                    "\"\(preview(text))\" without special tokens: got "
                        + "\(try tokenizer.encode(text, addSpecialTokens: false)), expected \(wantPlain)"
                )
            }
            let skip = tokenizer.decode(got, skipSpecialTokens: true)
            let expectedSkip = TokenizerFixtures.ExpectedText(skipped[i])
            if !expectedSkip.matches(skip, input: text) {
                failures.append(
                    "\"\(preview(text))\": skip-special decode \"\(preview(skip))\", "
                        + "expected \(expectedSkip.describe(input: text))")
            }
            let full = tokenizer.decode(got)
            let expectedFull = TokenizerFixtures.ExpectedText(decoded[i])
            if !expectedFull.matches(full, input: skip) {
                failures.append(
                    "\"\(preview(text))\": decode \"\(preview(full))\", "
                        + "expected \(expectedFull.describe(input: skip))")
            }
            var stream = StreamingDecoder(tokenizer: tokenizer)
            let streamed = got.map { stream.append($0) }.joined() + stream.flush()
            if streamed != full {
                failures.append(
                    "\"\(preview(text))\": streamed \"\(preview(streamed))\", decode \"\(preview(full))\""
                )
            }
        }
        if !failures.isEmpty {
            Issue.record(
                "\(variant.name): \(failures.count) differences:\n\(failures.prefix(8).joined(separator: "\n"))"
            )
        }
    }
}

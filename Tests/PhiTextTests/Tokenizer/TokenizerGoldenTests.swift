import Foundation
import TestSupport
import Testing

@testable import PhiText

/// Ids and decodes equal to the `tokenizers` library on the whole corpus, for every
/// tokenizer (goldens from scripts/tokenizer/make_golden.py).
@Suite("Tokenizer matches tokenizers on the corpus", .tags(.slow), .skippedWhenFast)
struct TokenizerGoldenTests {
    @Test(arguments: TokenizerFixtures.names)
    func encodeMatchesGolden(_ name: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(name)
        let golden = try TokenizerFixtures.golden(name)
        let corpus = TokenizerFixtures.corpus
        try #require(golden.entries.count == corpus.count, "golden is stale: rerun make_golden.py")
        let encoded = try TokenizerFixtures.encodedCorpus(name)
        var failures: [String] = []
        for (index, (text, expected)) in zip(corpus, golden.entries).enumerated() {
            let ids = encoded[index]
            let same =
                ids.count == expected.count && TokenizerFixtures.hash(ids) == expected.hash
                && (expected.ids == nil || expected.ids! == ids)
            guard !same else { continue }
            var report =
                "text \(index) \"\(preview(text))\": \(ids.count) ids, expected \(expected.count)"
            if let want = expected.ids {
                let first =
                    (0..<min(ids.count, want.count)).first { ids[$0] != want[$0] }
                    ?? min(ids.count, want.count)
                report +=
                    "; first difference at \(first): got \(ids[first...].prefix(8)) "
                    + "\(ids[first...].prefix(8).map { tokenizer.token(for: $0) ?? "?" }), "
                    + "expected \(want[first...].prefix(8)) "
                    + "\(want[first...].prefix(8).map { tokenizer.token(for: $0) ?? "?" })"
            } else {
                report +=
                    "; got \(ids.prefix(40)) (expected ids: scripts/tokenizer/show_golden.py "
                    + "\(name) \(index))"
            }
            failures.append(report)
        }
        if !failures.isEmpty {
            Issue.record(
                "\(failures.count) of \(corpus.count) texts differ:\n\(failures.prefix(15).joined(separator: "\n"))"
            )
        }
    }

    @Test(arguments: TokenizerFixtures.names)
    func decodeMatchesGolden(_ name: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(name)
        let golden = try TokenizerFixtures.golden(name)
        let encoded = try TokenizerFixtures.encodedCorpus(name)
        var failures: [String] = []
        for (index, (text, expected)) in zip(TokenizerFixtures.corpus, golden.entries).enumerated()
        {
            let ids = encoded[index]
            let decoded = tokenizer.decode(ids)
            if !expected.decoded.matches(decoded, input: text) {
                failures.append(
                    "text \(index): decode \"\(preview(decoded))\", expected "
                        + expected.decoded.describe(input: text))
            }
            let skipped = tokenizer.decode(ids, skipSpecialTokens: true)
            if !expected.skipped.matches(skipped, input: text) {
                failures.append(
                    "text \(index): skip-special decode \"\(preview(skipped))\", expected "
                        + expected.skipped.describe(input: text))
            }
        }
        for (index, c) in golden.decodeCases.enumerated() {
            if tokenizer.decode(c.ids) != c.text {
                failures.append(
                    "decode case \(index) \(c.ids): \"\(preview(tokenizer.decode(c.ids)))\", expected \"\(preview(c.text))\""
                )
            }
            if tokenizer.decode(c.ids, skipSpecialTokens: true) != c.skipped {
                failures.append("decode case \(index) \(c.ids) (skip special): differs")
            }
        }
        if !failures.isEmpty {
            Issue.record(
                "\(failures.count) decodes differ:\n\(failures.prefix(15).joined(separator: "\n"))")
        }
    }

    /// The streamed pieces of every corpus encoding concatenate to `decode`, and no piece
    /// splits a character (each is valid UTF-8 on its own, which `String` guarantees, and none
    /// contains U+FFFD the full decode doesn't have). Skipping special tokens is checked on
    /// every fourth text, to keep the debug-build run short.
    @Test(arguments: TokenizerFixtures.names)
    func streamingEqualsDecode(_ name: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(name)
        let encoded = try TokenizerFixtures.encodedCorpus(name)
        var failures: [String] = []
        for (index, ids) in encoded.enumerated() {
            for skip in index % 4 == 0 ? [false, true] : [false] {
                var stream = StreamingDecoder(tokenizer: tokenizer, skipSpecialTokens: skip)
                var pieces = ids.map { stream.append($0) }
                pieces.append(stream.flush())
                let full = tokenizer.decode(ids, skipSpecialTokens: skip)
                let joined = pieces.joined()
                if joined != full {
                    failures.append(
                        "text \(index) (skip \(skip)): streamed \"\(preview(joined))\", decode \"\(preview(full))\""
                    )
                }
                let replacements = full.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
                if joined.unicodeScalars.filter({ $0 == "\u{FFFD}" }).count > replacements {
                    failures.append("text \(index): a streamed piece split a character")
                }
            }
        }
        if !failures.isEmpty {
            Issue.record(
                "\(failures.count) streams differ:\n\(failures.prefix(10).joined(separator: "\n"))")
        }
    }
}

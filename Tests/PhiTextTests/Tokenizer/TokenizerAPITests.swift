import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// The public API around encoding: vocabulary queries, streaming details and load errors.
/// Expected values come from tokenizers 0.23.3.
@Suite("Tokenizer API")
struct TokenizerAPITests {
    @Test func phi35Vocabulary() throws {
        let t = try TokenizerFixtures.tokenizer("phi35")
        #expect(t.vocabularySize == 32011)
        #expect(t.addedTokens.count == 14)
        #expect(t.tokenID(for: "<|end|>") == 32007)
        #expect(t.tokenID(for: "▁Hello") == 15043)
        #expect(t.token(for: 13) == "<0x0A>")
        #expect(t.token(for: 32011) == nil)
        #expect(t.tokenID(for: "no such token") == nil)
        let end = try #require(t.addedTokens.first { $0.id == 32007 })
        #expect(end.special && end.rstrip && !end.lstrip && !end.normalized)
        #expect(try t.encode("Hello world") == [15043, 3186])
        #expect(try t.encode("") == [])
    }

    @Test func phi4Vocabulary() throws {
        let t = try TokenizerFixtures.tokenizer("phi4mini")
        #expect(t.vocabularySize == 200_029)
        #expect(t.tokenID(for: "Ġworld") == 2375)
        #expect(t.token(for: 13225) == "Hello")
        #expect(t.tokenID(for: "<|assistant|>") == 200_019)
        #expect(t.addedTokens.first { $0.id == 200_023 }?.special == false)  // <|tool|>
        #expect(try t.encode("  leading spaces") == [220, 8117, 18608])
    }

    /// Escaped vocabulary strings (`\u0120`, a surrogate pair), legacy merges, and an added
    /// token numbered after the vocabulary the way tokenizers does it.
    @Test func escapedVocabularyAndLegacyMerges() throws {
        let json = #"""
            {"added_tokens": [{"id": 5, "content": "<|x|>", "special": true, "normalized": false}],
             "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
             "decoder": {"type": "ByteLevel"},
             "model": {"type": "BPE", "vocab": {"h": 0, "i": 1, "hi": 2, "\u0120": 3,
                       "\u0120hi": 4, "\ud83d\ude00": 6}, "merges": ["h i", "\u0120 hi"]}}
            """#
        let t = try Tokenizer(tokenizerJSON: Array(json.utf8), source: "inline")
        #expect(try t.encode("hi hi<|x|>hi") == [2, 4, 6, 2])
        #expect(try t.encode("ih") == [1, 0])
        #expect(t.vocabularySize == 7)
        #expect(t.decode([2, 4, 6, 2]) == "hi hi<|x|>hi")
        #expect(t.token(for: 4) == "Ġhi")
    }

    @Test func dataAndByteInitsAgree() throws {
        let path = try TokenizerFixtures.path("stories260k")
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let a = try Tokenizer(tokenizerJSON: data, source: path)
        let b = try Tokenizer(tokenizerJSON: [UInt8](data), source: path)
        let c = try Tokenizer.load(directory: (path as NSString).deletingLastPathComponent)
        let text = "Once upon a time 🤖"
        #expect(try a.encode(text) == b.encode(text) && b.encode(text) == c.encode(text))
        #expect(
            try a.encode(text, addSpecialTokens: false) == Array(try a.encode(text).dropFirst()))
    }

    /// 🤖 arrives as four byte tokens; the stream emits it whole, once, on the last one.
    @Test func streamingHoldsSplitCharacters() throws {
        let t = try TokenizerFixtures.tokenizer("phi35")
        let ids = try t.encode("emoji 🤖 and 日本語")
        #expect(
            ids == [953, 29877, 2397, 29871, 243, 162, 167, 153, 322, 29871, 30325, 30346, 30968])
        var stream = StreamingDecoder(tokenizer: t)
        let pieces = ids.map { stream.append($0) }
        #expect(pieces == ["em", "o", "ji", " ", "", "", "", "🤖", " and", " ", "日", "本", "語"])
        #expect(stream.flush() == "")
    }

    @Test func streamingByteLevel() throws {
        let t = try TokenizerFixtures.tokenizer("phi4mini")
        let ids = try t.encode("emoji 🤖 and 日本語")
        #expect(ids == [75339, 93643, 244, 326, 17428, 40909])
        var stream = StreamingDecoder(tokenizer: t)
        #expect(ids.map { stream.append($0) } == ["emoji", "", " 🤖", " and", " 日本", "語"])
    }

    /// Output that is not UTF-8 (a stray continuation byte after a finished character)
    /// becomes U+FFFD; an unfinished character at the end is flushed as U+FFFD, as `decode`.
    @Test func streamingInvalidBytes() throws {
        let t = try TokenizerFixtures.tokenizer("phi35")
        var stream = StreamingDecoder(tokenizer: t)
        let out = [243, 162, 167, 153, 131].map { stream.append($0) }  // F0 9F A4 96, then 0x80
        #expect(out == ["", "", "", "🤖", "\u{FFFD}"])
        var unfinished = StreamingDecoder(tokenizer: t)
        #expect([243, 162].map { unfinished.append($0) } == ["", ""])
        #expect(unfinished.flush() == t.decode([243, 162]))
        #expect(t.decode([243, 162]) == "\u{FFFD}\u{FFFD}")
    }

    @Test func streamingSkipsSpecialTokens() throws {
        let t = try TokenizerFixtures.tokenizer("stories260k")
        let ids = try t.encode("Once upon a time")
        #expect(ids.first == 1)
        var stream = StreamingDecoder(tokenizer: t, skipSpecialTokens: true)
        #expect(ids.map { stream.append($0) }.joined() == "Once upon a time")
        var raw = StreamingDecoder(tokenizer: t)
        #expect(ids.map { raw.append($0) }.joined() == "<s> Once upon a time")
    }

    @Test func missingAndBrokenFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(throws: TokenizerError.missingFile(path: dir.path + "/tokenizer.json")) {
            try Tokenizer.load(directory: dir.path)
        }
        let cases: [(String, String)] = [
            ("[1, 2]", "invalid JSON at byte 0: expected '{'"),
            (#"{"model": {"type": "BPE", "vocab": {"a": 0}}}"#, "model.merges: missing"),
            (
                #"{"model": {"type": "BPE", "vocab": {"a": 0.5}, "merges": []}}"#,
                "expected an integer"
            ),
            (
                #"{"model": {"type": "BPE", "vocab": {}, "merges": [], "dropout": 0.1}}"#,
                "BPE dropout"
            ),
            (
                #"{"truncation": {"max_length": 5}, "model": {"type": "BPE", "vocab": {}, "merges": []}}"#,
                "truncation: unsupported truncation"
            ),
            (
                #"{"decoder": {"type": "CTC"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}"#,
                "decoder.type: unsupported decoder 'CTC'"
            ),
            (
                #"{"pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "ByteLevel"}, {"type": "Digits"}]}, "model": {"type": "BPE", "vocab": {}, "merges": []}}"#,
                "ByteLevel must come last"
            ),
            (
                "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"\u{1}\": 0}, \"merges\": []}}",
                "control character"
            ),
        ]
        for (json, message) in cases {
            do {
                _ = try Tokenizer(tokenizerJSON: Array(json.utf8), source: "t.json")
                Issue.record("accepted: \(json)")
            } catch let error as TokenizerError {
                #expect(error.exitCode == .dataError)
                #expect(
                    error.message.hasPrefix("t.json: ") && error.message.contains(message),
                    "\(error.message)")
            }
        }
    }

    /// Every truncation and many single-byte corruptions of a real tokenizer.json either load
    /// or throw a `TokenizerError`; none crashes.
    @Test func truncatedAndCorruptedFilesThrow() throws {
        let path = try TokenizerFixtures.path("stories260k")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        var rejected = 0
        for cut in stride(from: 0, to: bytes.count, by: 211) {
            do {
                _ = try Tokenizer(tokenizerJSON: Array(bytes[..<cut]), source: "cut")
            } catch is TokenizerError { rejected += 1 }
        }
        #expect(rejected == (bytes.count + 210) / 211)
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<300 {
            x ^= x << 13
            x ^= x >> 7
            x ^= x << 17
            var copy = bytes
            copy[Int(x % UInt64(copy.count))] = UInt8(truncatingIfNeeded: x >> 32)
            do {
                let t = try Tokenizer(tokenizerJSON: copy, source: "flip")
                _ = t.decode(try t.encode("Once upon a time, 🤖 <s>"))
            } catch is TokenizerError {}
        }
        // A bad merge deep in a list long enough to be resolved on two threads.
        let merges = Array(repeating: #""a b""#, count: 5000) + [#""a c""#]
        let long =
            #"{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["#
            + merges.joined(separator: ",") + "]}}"
        #expect(
            throws: TokenizerError.malformed(
                path: "long", field: "model.merges",
                reason: "merge 5001: 'c' is not in the vocabulary")
        ) { try Tokenizer(tokenizerJSON: Array(long.utf8), source: "long") }
        let huge = #"{"model": {"type": "BPE", "vocab": {"a": 2000000000}, "merges": []}}"#
        #expect(throws: TokenizerError.self) {
            try Tokenizer(tokenizerJSON: Array(huge.utf8), source: "huge")
        }
    }
}

import Foundation
import TestSupport
import Testing

/// `phikit tokenize`: ids as the `tokenizers` library gives them (values below came from
/// tokenizers 0.23.3), decoding, and the exit codes of bad input.
@Suite("phikit tokenize")
struct TokenizeCLITests {
    static let stories = TestPaths.storiesModel.path
    static var phi35: String {
        get throws { try TestPaths.shared("microsoft--Phi-3.5-mini-instruct") }
    }
    static var phi4: String {
        get throws { try TestPaths.shared("_derived/microsoft--Phi-4-mini-instruct") }
    }

    @Test func encodesWithBOS() throws {
        let r = try Phikit.run("tokenize", Self.stories, "Once upon a time, there was a cat.")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "1 403 407 261 378 432 383 286 261 280 294 426\n")
    }

    @Test func aliasAndNoSpecialTokens() throws {
        let r = try Phikit.run("tokenize", "stories-260k", "--no-special-tokens", "Tom and Lily 🤖")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "274 287 269 317 410 243 162 167 153\n")
    }

    @Test func json() throws {
        let r = try Phikit.run("tokenize", Self.phi4, "Hello world 🤖", "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["ids"] as? [Int] == [13225, 2375, 93643, 244])
        #expect(object["tokens"] as? [String] == ["Hello", "Ġworld", "ĠðŁ¤", "ĸ"])
    }

    @Test func chatMarkupUsesAddedTokens() throws {
        let r = try Phikit.run("tokenize", Self.phi35, "<|user|>\nHi<|end|>\n<|assistant|>\n")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "32010 6324 32007 32001\n")
    }

    /// `--chat`: the Phi-3.5 template's prompt, encoded without added tokens (ids from
    /// transformers' apply_chat_template(tokenize=True)); a base model has no template.
    @Test func chatConversation() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("conversation.json")
        try Data(
            #"[{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Hi"}]"#
                .utf8
        )
        .write(to: file)
        let r = try Phikit.run("tokenize", Self.phi35, "--chat", file.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "32006 887 526 1935 344 29889 32007 32010 6324 32007 32001\n")
        let json = try Phikit.run("tokenize", Self.phi35, "--chat", file.path, "--json")
        #expect(json.stdout.contains(#""text" : "<|system|>\nYou are terse.<|end|>\n"#))
        let base = try Phikit.run("tokenize", Self.stories, "--chat", file.path)
        #expect(base.status == 65)
        #expect(base.stderr.hasPrefix("error: ") && base.stderr.contains("no chat template"))
        let both = try Phikit.run("tokenize", Self.phi35, "--chat", file.path, "text")
        #expect(both.status == 64)
    }

    @Test func readsStdinAndFiles() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("text.txt")
        try Data("Tom and Lily 🤖\nOnce upon a time, there was a cat.\n".utf8).write(to: file)
        let lines = try Phikit.run("tokenize", Self.stories, "--file", file.path, "--lines")
        #expect(lines.status == 0, "\(lines.stderr)")
        #expect(
            lines.stdout
                == "1 274 287 269 317 410 243 162 167 153\n1 403 407 261 378 432 383 286 261 280 294 426\n"
        )
        let count = try Phikit.run("tokenize", Self.stories, "--file", file.path, "--count")
        #expect(Int(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 25)  // the file as one text
        // No <text>: stdin, here empty (the test runner gives /dev/null), so only BOS.
        let empty = try Phikit.run("tokenize", Self.stories)
        #expect(empty.status == 0 && empty.stdout == "1\n", "\(empty.stderr)")
        let missing = try Phikit.run(
            "tokenize", Self.stories, "--file", dir.appendingPathComponent("nope").path)
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("error: "))
    }

    @Test func decodes() throws {
        let spaced = try Phikit.run(
            "tokenize", Self.stories, "--decode", "1 274 287 269 317 410 243 162 167 153")
        #expect(spaced.status == 0, "\(spaced.stderr)")
        #expect(spaced.stdout == "<s> Tom and Lily 🤖\n")
        let array = try Phikit.run(
            "tokenize", Self.stories, "--decode", "[1, 274, 287, 269, 317]", "--skip-special-tokens"
        )
        #expect(array.stdout == "Tom and Lily\n")
        let json = try Phikit.run("tokenize", Self.stories, "--decode", "1,274,287", "--json")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["text"] as? String == "<s> Tom")
    }

    @Test(arguments: [
        (["--decode", "1 two 3"], "'two' is not a token id"),
        (["--decode", "1 512"], "token id 512 is outside"),
        (["--decode", "-4"], "token id -4 is outside"),
        (["--skip-special-tokens", "hi"], "--skip-special-tokens needs --decode"),
        (["--decode", "--count", "1"], "--decode takes ids"),
    ])
    func badArgumentsAreUsageErrors(_ extra: [String], _ message: String) throws {
        let r = try Phikit.run(["tokenize", Self.stories] + extra)
        #expect(r.status == 64, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(r.stderr)")
    }

    @Test func missingModelAndTokenizer() throws {
        let unknown = try Phikit.run("tokenize", "no-such-model-alias", "hi")
        #expect(unknown.status == 66)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let noTokenizer = try Phikit.run("tokenize", dir.path, "hi")
        #expect(noTokenizer.status == 66)
        #expect(noTokenizer.stderr.contains("tokenizer.json: no such file"))
    }

    @Test(arguments: [
        (#"{"model": "#, "invalid JSON at byte"),
        (#"{"model": {"type": "WordPiece", "vocab": {}}}"#, "unsupported model 'WordPiece'"),
        (
            #"{"normalizer": {"type": "BertNormalizer"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}"#,
            "normalizer.type: unsupported normalizer 'BertNormalizer'"
        ),
        (
            #"{"pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?<=a)b"}, "behavior": "Isolated"}, "model": {"type": "BPE", "vocab": {}, "merges": []}}"#,
            "pre_tokenizer.pattern.Regex: unsupported regular expression"
        ),
        (
            #"{"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}}"#,
            "'b' is not in the vocabulary"
        ),
    ])
    func brokenTokenizerIsDataError(_ json: String, _ message: String) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(json.utf8).write(to: dir.appendingPathComponent("tokenizer.json"))
        let r = try Phikit.run("tokenize", dir.path, "hi")
        #expect(r.status == 65, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains(message), "\(r.stderr)")
    }
}

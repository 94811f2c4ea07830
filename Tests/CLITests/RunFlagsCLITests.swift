import Foundation
import Testing

/// The flags people bring from ollama, llama.cpp and mlx-lm, on `phikit run` with the bundled
/// TinyStories model: a positional prompt, -f, -p values that begin with `-`, the aliases,
/// --max-kv-size, the hint for an unknown short flag, and `--json --stream`.
@Suite("phikit run: the flags of neighbouring tools")
struct RunFlagsCLITests {
    /// The README's prompted sample: "Once upon a time" continues ", there was a little…".
    static let continuation = ", there was a little girl named"

    @Test("a positional prompt (ollama) and -f FILE give what -p gives")
    func promptSources() throws {
        let words = try Phikit.run(["run", "stories-260k", "Once", "upon", "a", "time", "-m", "9"])
        #expect(words.status == 0, "\(words.stderr)")
        #expect(words.stdout.hasPrefix(Self.continuation))
        let quoted = try Phikit.run(["run", "stories-260k", "Once upon a time", "-m", "9"])
        #expect(quoted.stdout == words.stdout)

        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("prompt.txt")
        try Data("Once upon a time".utf8).write(to: file)
        let fromFile = try Phikit.run(["run", "stories-260k", "--file", file.path, "-m", "9"])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        #expect(fromFile.stdout == words.stdout)

        let missing = try Phikit.run(["run", "stories-260k", "-f", dir.path + "/nope.txt"])
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("error: ") && missing.stderr.contains("nope.txt"))
        let both = try Phikit.run(["run", "stories-260k", "-p", "a", "b"])
        #expect(both.status == 64)
        #expect(
            both.stderr.contains("give the prompt one way: after the model, with -p or with -f"))
    }

    @Test("-p takes a value that begins with '-'; the aliases of mlx-lm and llama.cpp work")
    func dashValuesAndAliases() throws {
        let r = try Phikit.run([
            "run", "stories-260k", "-p", "-m 5 --json", "-n", "7", "--temperature", "0",
            "--ignore-chat-template", "--max-kv-size", "64", "--json",
        ])
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["generation_tokens"] as? Int == 7)
        #expect((object["prompt_tokens"] as? Int ?? 0) > 3)  // the text, not an empty prompt
        let long = try Phikit.run(["run", "stories-260k", "--prompt", "-x", "--max-tokens", "3"])
        #expect(long.status == 0, "\(long.stderr)")
        // --system-prompt is --system: the base model has no template to put it in.
        let system = try Phikit.run(["run", "stories-260k", "--system-prompt", "-Be brief", "hi"])
        #expect(system.status == 64)
        #expect(system.stderr.contains("has no chat template"))
    }

    @Test(
        "an unknown short flag gets the real one it resembles, never an arbitrary -h",
        arguments: [
            ("-t", "did you mean '--threads'?"), ("-P", "did you mean '-p'?"),
            ("-c", "did you mean '--max-kv-size'?"), ("-M", "did you mean '-m'?"),
            ("-temp", "did you mean '--temp'?"),
        ])
    func shortFlagHint(_ flag: String, _ hint: String) throws {
        let r = try Phikit.run(["run", "stories-260k", flag, "1"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '\(flag)'"))
        #expect(r.stderr.contains("hint: \(hint)"), "\(r.stderr)")
    }

    @Test func shortFlagWithoutLookAlikeGetsNoGuess() throws {
        let r = try Phikit.run(["run", "stories-260k", "-x"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown option '-x'"))
        #expect(!r.stderr.contains("did you mean"))
    }

    @Test("--max-kv-size: a prompt that does not fit names its tokens, the context and the flag")
    func contextFlag() throws {
        let prompt = String(repeating: "Tom and Lily went to the park. ", count: 4)
        let r = try Phikit.run(["run", "stories-260k", "-p", prompt, "--max-kv-size", "16"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("tokens, but the context (--max-kv-size 16) holds 16"))
        #expect(r.stderr.contains("hint: raise --max-kv-size to at least "))
        #expect(r.stderr.contains("(the model allows 512)"))
        let fits = try Phikit.run(["run", "stories-260k", "-p", prompt, "--max-kv-size", "100"])
        #expect(fits.status == 0, "\(fits.stderr)")
        let beyond = try Phikit.run(["run", "stories-260k", "hi", "--max-kv-size", "513"])
        #expect(beyond.status == 64)
        #expect(beyond.stderr.contains("--max-kv-size 513 is outside 1...512"))
    }

    @Test("--json --stream: one object per token as it comes, then the final figures")
    func jsonStream() throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "12", "--json", "--stream"])
        #expect(r.status == 0, "\(r.stderr)")
        let objects = try r.stdout.split(separator: "\n").map { line in
            try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
        #expect(objects.count == 13)
        let pieces = objects.dropLast()
        #expect(pieces.map { $0["token"] as? Int }.prefix(4) == [403, 407, 261, 378])
        let last = try #require(objects.last)
        #expect(last["stop_reason"] as? String == "max_tokens")
        #expect(last["tokens"] as? [Int] == pieces.compactMap { $0["token"] as? Int })
        #expect(pieces.map { $0["text"] as? String ?? "?" }.joined() == last["text"] as? String)
        let plain = try Phikit.run(["run", "stories-260k", "-p", "", "--stream"])
        #expect(plain.status == 64)
    }
}

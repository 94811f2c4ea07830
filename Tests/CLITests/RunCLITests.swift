import Foundation
import Testing

/// `phikit run` on the bundled TinyStories model (models/stories-260k): the story its README
/// documents, the prompt sources, --json and --stats, the refusals, and Ctrl-C.
@Suite("phikit run")
struct RunCLITests {
    /// The README's greedy story from `<s>` (llama2.c, transformers and mlx_lm agree on it).
    static let readme: String = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k/README.md").path
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }()
    static let storyStart =
        "Once upon a time, there was a little girl named Lily. She loved to play"

    @Test("an empty prompt is <s>: greedy decoding prints the README's story")
    func story() throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "256"])
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.hasPrefix(Self.storyStart))
        let story = r.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(story.count > 500 && Self.readme.contains(story))
        #expect(r.stderr.isEmpty)
    }

    @Test("--kv-bits 8 and 32 run; the story's first sentences stay the same")
    func cacheWidths() throws {
        for bits in ["8", "32"] {
            let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "60", "--kv-bits", bits])
            #expect(r.status == 0, "stderr: \(r.stderr)")
            #expect(r.stdout.hasPrefix(Self.storyStart), "--kv-bits \(bits)")
        }
    }

    /// stories-260k is float32, which the 8-bit kernel does not take: the same story. A CPU
    /// without AVX-512 VNNI refuses the option.
    @Test("--act-bits 8 runs (or is refused without AVX-512 VNNI); a float model's story is unchanged")
    func activationWidth() throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "60", "--act-bits", "8"])
        if r.status == 64 {
            #expect(r.stderr.contains("--act-bits 8 needs a CPU with AVX-512 VNNI"))
            return
        }
        #expect(r.status == 0, "stderr: \(r.stderr)")
        #expect(r.stdout.hasPrefix(Self.storyStart))
    }

    @Test("the prompt comes from -p, `-p -` or piped stdin, else the registry's default")
    func promptSources() throws {
        // The README's prompted sample: "Once upon a time" continues ", there was a little…"
        let expected = ", there was a little girl named Lily. She loved to play outside"
        for (arguments, input) in [
            (["-p", "Once upon a time"], nil), (["-p", "-"], "Once upon a time"),
            ([], "Once upon a time"), ([], nil),
        ] as [([String], String?)] {
            let r = try Phikit.run(["run", "stories-260k", "-m", "30"] + arguments, stdin: input)
            #expect(r.status == 0)
            #expect(r.stdout.hasPrefix(expected), "\(arguments) stdin \(input ?? "none")")
        }
    }

    @Test("--json prints one object with the reply, its ids and the figures")
    func json() throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "12", "--json"])
        #expect(r.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(
            (object["text"] as? String).map {
                Self.storyStart.hasPrefix($0.trimmingCharacters(in: .whitespaces))
            } == true)
        #expect((object["tokens"] as? [Int])?.prefix(4) == [403, 407, 261, 378])
        #expect(object["prompt_tokens"] as? Int == 1)
        #expect(object["generation_tokens"] as? Int == 12)
        #expect(object["stop_reason"] as? String == "max_tokens")
        #expect(object["weights"] as? String == "mapped")  // a file under 2 MiB stays mapped
        for key in [
            "prompt_tokens_per_second", "generation_tokens_per_second", "time_to_first_token",
            "load_seconds", "peak_memory_bytes",
        ] {
            #expect(object[key] is NSNumber, "\(key)")
        }
    }

    @Test("--stats prints mlx-lm's lines and more to stderr; the story ends at <s>")
    func stats() throws {
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "400", "--stats"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("Prompt: 1 tokens, "))
        // The README: greedy from <s> emits the end-of-story <s> at generated position 345.
        #expect(r.stderr.contains("Generation: 345 tokens, "))
        #expect(r.stderr.contains("tokens-per-sec"))
        for line in ["Time to first token: ", "Load: ", " s (weights mapped)", "Peak memory: ", "Stop: eos"] {
            #expect(r.stderr.contains(line), "\(line)")
        }
    }

    @Test("a reply cut by the context says so on stderr, without --stats")
    func contextFullIsTold() throws {
        let r = try Phikit.run(
            ["run", "stories-260k", "-p", "Once upon a time", "-m", "100", "--max-kv-size", "12"])
        #expect(r.status == 0)
        #expect(r.stderr.contains("the context (12 tokens) is full: the answer was cut"))
        #expect(r.stderr.contains("hint: give a larger --max-kv-size"))
        let fits = try Phikit.run(["run", "stories-260k", "-p", "Once upon a time", "-m", "5"])
        #expect(!fits.stderr.contains("is full"))
    }

    @Test("NaN logits are an error with every sampler, not token 0 repeated")
    func nanLogits() throws {
        // stories-260k with its final norm's weights made NaN.
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-nan-\(UUID().uuidString)")
        let stories = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k")
        try FileManager.default.copyItem(at: stories, to: dir)
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("model.safetensors")
        var bytes = try Data(contentsOf: file)
        let headerLength = bytes.prefix(8).enumerated().reduce(0) { $0 | Int($1.1) << (8 * $1.0) }
        let header = try #require(
            try JSONSerialization.jsonObject(with: bytes.subdata(in: 8..<(8 + headerLength)))
                as? [String: Any])
        let norm = try #require(header["model.norm.weight"] as? [String: Any])
        let offsets = try #require(norm["data_offsets"] as? [Int])
        let start = 8 + headerLength + offsets[0]
        bytes.replaceSubrange(
            start..<(8 + headerLength + offsets[1]),
            with: Data(repeating: 0xFF, count: offsets[1] - offsets[0]))
        try bytes.write(to: file)
        for flags in [
            ["--temp", "1", "--min-p", "0.1"], ["--temp", "1", "--top-p", "0.5"], ["--temp", "1"],
            [],
        ] {
            let r = try Phikit.run(
                ["run", dir.path, "-p", "Once", "-m", "5", "--seed", "1"] + flags)
            #expect(r.status == 65, "\(flags)")
            #expect(r.stderr.contains("logits are not numbers (NaN)"), "\(flags): \(r.stderr)")
            #expect(r.stdout.isEmpty, "\(flags)")
        }
    }

    @Test(
        "bad requests are one-line errors with their exit codes",
        arguments: [
            (["-m", "0"], 64, "--max-tokens must be at least 1"),
            (["--top-p", "0"], 64, "--top-p must be in (0, 1]"),
            (["--presence-penalty", "3"], 64, "--presence-penalty must be in [-2, 2]"),
            (["--frequency-penalty", "-2.5"], 64, "--frequency-penalty must be in [-2, 2]"),
            (["--system", "Be brief."], 64, "has no chat template"),
            (["--kv-bits", "4"], 64, "--kv-bits must be 8, 16 or 32"),
            (["--act-bits", "4"], 64, "--act-bits must be 8 or 16"),
            (["--extra-eos-token", "<|nope|>"], 64, "'<|nope|>' is neither a token"),
            (
                ["-p", String(repeating: "Tom and Lily went to the park. ", count: 60)], 64,
                "but the context holds 512"
            ),
        ] as [([String], Int32, String)])
    func refusals(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let r = try Phikit.run(["run", "stories-260k"] + arguments)
        #expect(r.status == status)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("error: "))
        #expect(r.stderr.contains(message), "stderr: \(r.stderr)")
    }

    @Test("a model that is nowhere is 66, offline")
    func missingModel() throws {
        let r = try Phikit.run(
            ["run", "nobody/nothing-here", "-p", "hi"],
            environment: [
                "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": NSTemporaryDirectory() + "/empty-hub",
            ])
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("error: "))
        #expect(r.stderr.contains("hint: HF_HUB_OFFLINE is set"))
    }

    #if os(Linux)
        /// The stories model with room for 200k positions, so a generation runs long enough
        /// (--ignore-eos) to be interrupted after its first words.
        @Test("Ctrl-C stops generation: the text so far is printed, exit 130")
        func interrupt() throws {
            let binary = try #require(Phikit.url)
            let dir = try TinyModel.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: dir) }
            let bundled = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("models/stories-260k")
            for name in try FileManager.default.contentsOfDirectory(atPath: bundled.path) {
                try FileManager.default.copyItem(
                    at: bundled.appendingPathComponent(name), to: dir.appendingPathComponent(name))
            }
            let configURL = dir.appendingPathComponent("config.json")
            var config = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: configURL))
                    as? [String: Any])
            config["max_position_embeddings"] = 200_000
            try TinyModel.writeJSON(config, to: configURL)

            let process = Process()
            process.executableURL = binary
            process.arguments = ["run", dir.path, "-p", "", "-m", "150000", "--ignore-eos"]
            let stdout = Pipe()
            let stderr = Pipe()
            process.standardOutput = stdout
            process.standardError = stderr
            process.standardInput = FileHandle.nullDevice
            try process.run()
            var printed = Data()
            while printed.count < 200 {
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                printed.append(chunk)
            }
            Phikit.interruptAndWait(process, doing: "run")
            printed.append(stdout.fileHandleForReading.readDataToEndOfFile())
            let message = String(
                decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            #expect(process.terminationStatus == 130, "stderr: \(message)")
            #expect(String(decoding: printed, as: UTF8.self).hasPrefix(Self.storyStart))
            #expect(message.hasPrefix("error: interrupted after "))
        }
    #endif
}

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17's contract on hostile model files and arguments: every one is refused with exit
/// 1…127 and an `error:` line, never a signal, never a hang.
@Suite("hostile model files and arguments")
struct HostileFilesCLITests {
    @Test(
        "a FIFO or a device in place of a model file is an error, not a hang",
        arguments: ["config.json", "model.safetensors", "generation_config.json"])
    func fifoInPlaceOfAFile(file: String) throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let path = model.appendingPathComponent(file).path
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        let commands = [["inspect", model.path], ["run", model.path, "-p", "hi", "-m", "2"]]
        // inspect does not read generation_config.json; run does.
        for command in file == "generation_config.json" ? [commands[1]] : commands {
            try Hostile.expectRefused(command, timeout: 30, status: 65, mentioning: "FIFO")
        }
        let verify = try Hostile.run(["verify", model.path], timeout: 30)
        #expect(verify.status == 1, "\(verify.stdout)\(verify.stderr)")

        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "/dev/zero")
        try Hostile.expectRefused(["run", model.path, "-p", "hi"], timeout: 30, status: 65)
    }

    @Test(
        "a directory in place of a model file gives 65 whichever file it is",
        arguments: [
            "config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
        ])
    func directoryInPlaceOfAFile(file: String) throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let path = model.appendingPathComponent(file).path
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Hostile.expectRefused(
            ["run", model.path, "-p", "hi"], status: 65, mentioning: "is a directory")
    }

    @Test("verify / says there is no config.json at once")
    func verifyRoot() throws {
        try Hostile.expectRefused(
            ["verify", "/"], timeout: 20, status: 66, mentioning: "config.json")
    }

    @Test(
        "run -m beyond the context runs until the context is full",
        arguments: ["9223372036854775807", "5000000000"])
    func hugeMaxTokens(value: String) throws {
        let r = try Hostile.run(
            ["run", "stories-260k", "-p", "", "-m", value, "--ignore-eos", "--json"])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("\"stop_reason\" : \"context_full\""), "\(r.stderr)")
    }

    @Test("a config.json with a duplicate key or a byte-order mark: 65 from every command")
    func oneJSONPolicy() throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let config = model.appendingPathComponent("config.json")
        let original = try Data(contentsOf: config)
        let text = String(decoding: original, as: UTF8.self)
        let duplicate = text.replacingOccurrences(
            of: "{", with: "{\"vocab_size\": 1, ", options: [], range: text.range(of: "{"))
        for bytes in [Data(duplicate.utf8), Data([0xEF, 0xBB, 0xBF]) + original] {
            try bytes.write(to: config)
            let out = model.deletingLastPathComponent().appendingPathComponent("out").path
            for command in [
                ["run", model.path, "-p", "hi"], ["convert", model.path, "-o", out],
                ["inspect", model.path],
            ] {
                try Hostile.expectRefused(command, status: 65, mentioning: "config.json")
            }
            let verify = try Hostile.run(["verify", model.path])
            #expect(verify.status == 1 && verify.stdout.contains("config.json"), "\(verify.stdout)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test("convert refuses a broken generation_config.json instead of copying it")
    func brokenGenerationConfig() throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        try Data("{\"eos_token_id\": \"two\"".utf8).write(
            to: model.appendingPathComponent("generation_config.json"))
        let out = model.deletingLastPathComponent().appendingPathComponent("out").path
        try Hostile.expectRefused(
            ["convert", model.path, "-o", out], status: 65, mentioning: "generation_config.json")
        #expect(!FileManager.default.fileExists(atPath: out))
    }

    @Test("LongRoPE with original_max_position_embeddings 1 is refused by validation")
    func longRopeNonsense() throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let url = model.appendingPathComponent("config.json")
        var config = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let half =
            ((config["hidden_size"] as? Int ?? 64) / (config["num_attention_heads"] as? Int ?? 8))
            / 2
        config["original_max_position_embeddings"] = 1
        config["rope_scaling"] = [
            "type": "longrope", "short_factor": Array(repeating: 1.0, count: half),
            "long_factor": Array(repeating: 1.0, count: half),
        ]
        try TinyModel.writeJSON(config, to: url)
        try Hostile.expectRefused(
            ["run", model.path, "-p", "hi"], status: 65,
            mentioning: "original_max_position_embeddings")
    }

    @Test("a safetensors header with shape [0, 2^60] beside its scales: list shows it broken")
    func emptyTensorOverflow() throws {
        let hub = try HubServerProcess()
        let store = hub.root.appendingPathComponent("store/models")
        let broken = store.appendingPathComponent("broken-4bit")
        try FileManager.default.createDirectory(at: broken, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: try TinyModel.phi3Directory(), to: store.appendingPathComponent("good-bf16"))
        try TinyModel.writeJSON(
            TinyModel.phi3Config, to: broken.appendingPathComponent("config.json"))
        try TinyModel.writeSafetensors(
            [
                .init(
                    name: "model.layers.0.mlp.down_proj.weight", dtype: "U32", shape: [0, 1 << 60]),
                .init(name: "model.layers.0.mlp.down_proj.scales", dtype: "BF16", shape: [0, 1]),
            ], to: broken.appendingPathComponent("model.safetensors"))
        let list = try Hostile.run(["list"], environment: hub.environment)
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout.contains("good-bf16"), "\(list.stdout)")
        #expect(list.stdout.contains("broken-4bit"), "\(list.stdout)")
        try Hostile.expectRefused(["inspect", broken.path], status: 65)
        let verify = try Hostile.run(["verify", broken.path])
        #expect(verify.status == 1, "\(verify.stderr)")
    }
}

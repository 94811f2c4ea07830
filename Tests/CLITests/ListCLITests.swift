import Foundation
import Testing

/// `phikit list`: the Hugging Face cache and the converted-model store, from the binary.
@Suite("phikit list")
struct ListCLITests {
    /// A cache holding the tiny bf16 model (pulled from the local Hub) and a store holding the
    /// tiny 4-bit model.
    func machine() throws -> HubServerProcess {
        let model = try TinyModel.phi3Directory()
        defer { try? FileManager.default.removeItem(at: model) }
        let hub = try HubServerProcess(model: model)
        let pulled = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let quantized = try TinyModel.quantizedDirectory()
        let store = hub.root.appendingPathComponent("store/models")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            at: quantized, to: store.appendingPathComponent("tiny-4bit"))
        return hub
    }

    @Test("a table of both kinds of models, with format, parameters and a footer")
    func table() throws {
        let hub = try machine()
        let r = try Phikit.run(["list"], environment: hub.environment)
        #expect(r.status == 0)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(
            lines[0].hasPrefix("NAME") && lines[0].contains("FORMAT") && lines[0].contains("STATUS")
        )
        let cached = try #require(lines.first { $0.hasPrefix("org/model") })
        #expect(
            cached.contains("main (ccccccc)") && cached.contains("bf16") && cached.contains("824"))
        #expect(cached.hasSuffix("complete") && !cached.hasSuffix("incomplete"))
        let stored = try #require(lines.first { $0.hasPrefix("tiny-4bit") })
        #expect(stored.contains("mlx q4 g64") && stored.contains("320"))
        #expect(lines.last?.hasPrefix("Found 2 model(s), 2 revision(s)") == true)
        #expect(!r.stdout.contains("\u{1B}") && r.stderr.isEmpty)

        let filtered = try Phikit.run(["ls", "TINY"], environment: hub.environment)
        #expect(filtered.stdout.contains("tiny-4bit") && !filtered.stdout.contains("org/model"))
        let bySize = try Phikit.run(["list", "--sort", "size"], environment: hub.environment)
        let order = bySize.stdout.split(separator: "\n").dropFirst().prefix(2).map {
            String($0.prefix(9))
        }
        #expect(order == ["org/model", "tiny-4bit"])  // 1.9 kB before 0.5 kB
        let bad = try Phikit.run(["list", "--sort", "age"], environment: hub.environment)
        #expect(bad.status == 64 && bad.stderr.contains("invalid value 'age' for '--sort'"))
    }

    @Test("--json, and a broken snapshot reported as incomplete with the reason")
    func jsonAndIncomplete() throws {
        let hub = try machine()
        let blobs = hub.repoDirectory.appendingPathComponent("blobs")
        let weights = try FileManager.default.contentsOfDirectory(atPath: blobs.path).first {
            $0.count == 64
        }
        try FileManager.default.removeItem(at: blobs.appendingPathComponent(try #require(weights)))
        let r = try Phikit.run(["list", "--json"], environment: hub.environment)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        let models = try #require(object["models"] as? [[String: Any]])
        let cached = try #require(models.first { $0["name"] as? String == "org/model" })
        #expect(cached["complete"] as? Bool == false)
        #expect(
            (cached["problems"] as? [String])?.first?.hasPrefix("broken links: model.safetensors")
                == true)
        #expect((cached["last_modified"] as? String)?.hasSuffix("Z") == true)
        let text = try Phikit.run(["list"], environment: hub.environment)
        #expect(text.stdout.contains("incomplete"))
        #expect(text.stdout.contains("org/model main (ccccccc): broken links: model.safetensors"))
    }

    @Test("--available: the registry with the user's own entries and what is on disk")
    func available() throws {
        let hub = try machine()
        let config = hub.root.appendingPathComponent("config/phikit")
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let entry =
            #"{"name": "tiny", "repo": "org/model", "parameters": 824, "downloadSize": 1909}"#
        try #"{"models": [\#(entry)]}"#.write(
            to: config.appendingPathComponent("registry.json"), atomically: true, encoding: .utf8)
        let r = try Phikit.run(["list", "--available"], environment: hub.environment)
        #expect(r.status == 0)
        let tiny = try #require(r.stdout.split(separator: "\n").first { $0.hasPrefix("tiny ") })
        #expect(
            tiny.contains("org/model") && tiny.contains("downloaded") && tiny.contains("~1.91 kB"))
        let phi4 = try #require(
            r.stdout.split(separator: "\n").first { $0.hasPrefix("phi-4-mini ") })
        #expect(
            phi4.contains("ac1c269") && phi4.contains("2.18 GB") && phi4.contains("not downloaded"))

        try #"{"models": [{"name": "tiny", "repo": "org/model", "parameters": "many"}]}"#
            .write(
                to: config.appendingPathComponent("registry.json"), atomically: true,
                encoding: .utf8)
        let broken = try Phikit.run(["list", "--available"], environment: hub.environment)
        #expect(broken.status == 65)
        #expect(
            broken.stderr.contains(
                "error: \(config.path)/registry.json: entry 'tiny' (models[0]): "
                    + "field 'parameters' must be a number"
            ))
    }
}

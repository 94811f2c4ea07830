import Foundation
import Testing

@Suite("phikit inspect")
struct InspectCLITests {
    @Test func tinyModelDirectory() throws {
        let dir = try TinyModel.phi3Directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Phikit.run("inspect", dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty)
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last == "9 tensors, 824 parameters, 1.65 kB, bf16")
        #expect(lines.first?.hasPrefix("NAME") == true)
        // Sorted by name: lm_head first, model.norm last.
        #expect(lines[1].hasPrefix("lm_head.weight "))
        #expect(lines[1].contains("[10, 8]"))
        #expect(lines.contains { $0.hasPrefix("config:       phi3, hidden 8,") })
        #expect(lines.contains("quantization: none"))
    }

    @Test func json() throws {
        let dir = try TinyModel.phi3Directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Phikit.run("inspect", dir.path, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["schema_version"] as? Int == 1)
        #expect(object["kind"] as? String == "directory")
        #expect(object["parameter_count"] as? Int == 824)
        #expect(object["tensor_count"] as? Int == 9)
        #expect(object["tensor_bytes"] as? Int == 1648)
        #expect(object["quantization"] is NSNull)
        #expect((object["metadata"] as? [String: String])?["format"] == "pt")
        let tensors = try #require(object["tensors"] as? [[String: Any]])
        #expect(tensors.map { $0["name"] as? String } == TinyModel.phi3Tensors.map(\.name).sorted())
        let qkv = try #require(
            tensors.first { $0["name"] as? String == "model.layers.0.self_attn.qkv_proj.weight" })
        #expect(qkv["dtype"] as? String == "BF16")
        #expect(qkv["shape"] as? [Int] == [24, 8])
        #expect(qkv["bytes"] as? Int == 384)
        #expect(qkv["parameters"] as? Int == 192)
        let config = try #require(object["config"] as? [String: Any])
        #expect(config["model_type"] as? String == "phi3")
        #expect(config["hidden_size"] as? Int == 8)
        #expect(config["layers"] as? Int == 1)
        #expect(config["kv_heads"] as? Int == 2)
        #expect(config["tie_word_embeddings"] as? Bool == false)
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.first?["name"] as? String == "model.safetensors")
    }

    @Test func quantizedModelCountsUnpackedParameters() throws {
        let dir = try TinyModel.quantizedDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Phikit.run("inspect", dir.path, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["parameter_count"] as? Int == 320)
        let q = try #require(object["quantization"] as? [String: Any])
        #expect(q["bits"] as? Int == 4)
        #expect(q["group_size"] as? Int == 64)
        #expect(q["source"] as? String == "config+tensors")
        #expect(q["quantized_tensors"] as? Int == 1)

        let text = try Phikit.run("inspect", dir.path)
        #expect(text.stdout.hasSuffix("4 tensors, 320 parameters, 272 B, bf16+u32, 4-bit\n"))
    }

    @Test func singleFile() throws {
        let dir = try TinyModel.phi3Directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Phikit.run(
            "inspect", dir.appendingPathComponent("model.safetensors").path, "--json")
        #expect(r.status == 0)
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "file")
        #expect(object["parameter_count"] as? Int == 824)
    }

    @Test func truncatedFileIsBadData() throws {
        let dir = try TinyModel.phi3Directory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("model.safetensors")
        let handle = try FileHandle(forWritingTo: file)
        let size = try handle.seekToEnd()
        try handle.truncate(atOffset: size - 100)
        try handle.close()
        let r = try Phikit.run("inspect", dir.path)
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("error: "))
        #expect(r.stderr.contains("model.safetensors"))
    }

    /// A half-downloaded model: the index names two shards, one is there. Inspect must not
    /// list the tensors it has and call it fine.
    @Test func shardMissingFromTheIndexIsBadData() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        try TinyModel.writeJSON(TinyModel.phi3Config, to: dir.appendingPathComponent("config.json"))
        let (first, second) = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
        try TinyModel.writeSafetensors(
            Array(TinyModel.phi3Tensors.prefix(4)), to: dir.appendingPathComponent(first))
        var weightMap: [String: String] = [:]
        for (i, t) in TinyModel.phi3Tensors.enumerated() { weightMap[t.name] = i < 4 ? first : second }
        try TinyModel.writeJSON(
            ["metadata": ["total_size": 1648], "weight_map": weightMap],
            to: dir.appendingPathComponent("model.safetensors.index.json"))
        let r = try Phikit.run("inspect", dir.path)
        #expect(r.status == 65)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.hasPrefix("error: "))
        #expect(r.stderr.contains(second))
    }

    @Test func garbageHeaderIsBadData() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("broken.safetensors")
        try Data("not a safetensors file at all".utf8).write(to: file)
        let r = try Phikit.run("inspect", file.path)
        #expect(r.status == 65)
        #expect(r.stderr.contains("broken.safetensors"))
    }

    @Test func missingPathIsNotFound() throws {
        let r = try Phikit.run("inspect", "/nonexistent/phikit/model")
        #expect(r.status == 66)
        #expect(r.stdout.isEmpty)
        #expect(r.stderr.contains("error: /nonexistent/phikit/model"))
    }

    @Test func directoryWithoutWeightsIsNotFound() throws {
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let r = try Phikit.run("inspect", dir.path)
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("error: "))
    }
}

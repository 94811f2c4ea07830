import Foundation
import Testing

/// `--adapter-path` end to end on the bundled stories-260k: a LoRA on the last layer's
/// qkv_proj changes the greedy story, `run --adapter-path` tells the same story as `fuse` then
/// `run` of the fused model, and a tensor of the wrong shape is exit 65 naming it.
@Suite("phikit run --adapter-path")
struct AdapterCLITests {
    /// An mlx-lm adapter folder for stories-260k (hidden 64, qkv rows 128): rank 2, scale 4,
    /// the last of 5 layers, pseudo-random float32 factors; `aShape` overrides lora_a's shape.
    static func writeAdapter(to dir: URL, aShape: [Int] = [64, 2]) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config: [String: Any] = [
            "fine_tune_type": "lora", "num_layers": 1,
            "lora_parameters": ["rank": 2, "scale": 4.0, "keys": ["self_attn.qkv_proj"]],
        ]
        try JSONSerialization.data(withJSONObject: config).write(
            to: dir.appendingPathComponent("adapter_config.json"))
        var state: UInt64 = 42
        func values(_ count: Int) -> [Float] {
            (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: state >> 11) % 2001 - 1000) / 4000
            }
        }
        let prefix = "model.layers.4.self_attn.qkv_proj."
        let tensors: [(String, [Int])] = [(prefix + "lora_a", aShape), (prefix + "lora_b", [2, 128])]
        var header: [String: Any] = [:]
        var data = Data()
        for (name, shape) in tensors {
            let floats = values(shape.reduce(1, *))
            header[name] = [
                "dtype": "F32", "shape": shape, "data_offsets": [data.count, data.count + floats.count * 4],
            ]
            floats.withUnsafeBytes { data.append(contentsOf: $0) }
        }
        var json = try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])
        while json.count % 8 != 0 { json.append(UInt8(ascii: " ")) }
        var file = Data()
        withUnsafeBytes(of: UInt64(json.count).littleEndian) { file.append(contentsOf: $0) }
        file.append(json)
        file.append(data)
        try file.write(to: dir.appendingPathComponent("adapters.safetensors"))
    }

    @Test func runTimeAdapterTellsTheFusedModelsStory() throws {
        let work = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let adapter = work.appendingPathComponent("adapter")
        try Self.writeAdapter(to: adapter)
        let plain = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "40"])
        let adapted = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "40", "--adapter-path", adapter.path])
        #expect(adapted.status == 0, "stderr: \(adapted.stderr)")
        #expect(plain.status == 0 && adapted.stdout != plain.stdout)
        let fusedDir = work.appendingPathComponent("fused").path
        let fused = try Phikit.run(["fuse", "stories-260k", "--adapter-path", adapter.path, "-o", fusedDir])
        #expect(fused.status == 0, "stderr: \(fused.stderr)")
        let story = try Phikit.run(["run", fusedDir, "-p", "", "-m", "40"])
        #expect(story.status == 0 && story.stdout == adapted.stdout)
    }

    @Test func wrongShapeIsExit65NamingTheTensor() throws {
        let work = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let adapter = work.appendingPathComponent("adapter")
        try Self.writeAdapter(to: adapter, aShape: [64, 3])
        let r = try Phikit.run(["run", "stories-260k", "-p", "", "-m", "4", "--adapter-path", adapter.path])
        #expect(r.status == 65)
        #expect(r.stderr.contains("model.layers.4.self_attn.qkv_proj.lora_a"), "stderr: \(r.stderr)")
        #expect(r.stdout.isEmpty)
        let missing = try Phikit.run(["run", "stories-260k", "-p", "", "--adapter-path", work.appendingPathComponent("none").path])
        #expect(missing.status == 66 && missing.stderr.contains("no such adapter"))
    }
}

import Foundation
import Testing

/// `--adapter-path` end to end on the bundled stories-260k: a LoRA on the last layer's
/// qkv_proj changes the greedy story, `run --adapter-path` tells the same story as `fuse` then
/// `run` of the fused model, and a tensor of the wrong shape is exit 65 naming it.
@Suite("phikit run --adapter-path")
struct AdapterCLITests {
    /// An mlx-lm adapter folder: rank 2, scale 4, pseudo-random float32 factors on `key` of
    /// `layers`, of (`inputs`, `outputs`); by default stories-260k's last qkv_proj (hidden 64,
    /// qkv rows 128); `aShape` overrides lora_a's shape.
    static func writeAdapter(
        to dir: URL, key: String = "self_attn.qkv_proj", layers: Range<Int> = 4..<5,
        inputs: Int = 64, outputs: Int = 128, aShape: [Int]? = nil
    ) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let config: [String: Any] = [
            "fine_tune_type": "lora", "num_layers": layers.count,
            "lora_parameters": ["rank": 2, "scale": 4.0, "keys": [key]],
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
        let tensors: [(String, [Int])] = layers.flatMap { l in
            let prefix = "model.layers.\(l).\(key)."
            return [(prefix + "lora_a", aShape ?? [inputs, 2]), (prefix + "lora_b", [2, outputs])]
        }
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

#if os(Linux)
    extension AdapterCLITests {
        /// Ctrl-C in the middle of a fuse (a 150 M-parameter bf16 base): exit 130, and neither the
        /// output nor its temporary directory is left, as with convert.
        @Test func interruptedFuseLeavesNothing() throws {
            let source = try TinyModel.mediumPhi3Directory()
            let work = try TinyModel.temporaryDirectory()
            defer {
                try? FileManager.default.removeItem(at: source)
                try? FileManager.default.removeItem(at: work)
            }
            let adapter = source.appendingPathComponent("adapter")
            try Self.writeAdapter(to: adapter, key: "self_attn.o_proj", layers: 0..<8, inputs: 1024, outputs: 1024)
            let output = work.appendingPathComponent("out")
            let (status, message) = try Phikit.interruptOnceWriting(
                ["fuse", source.path, "--adapter-path", adapter.path, "-o", output.path], work: work,
                doing: "fuse")
            #expect(status == 130, "stderr: \(message)")
            #expect(message.contains("error: interrupted"))
            #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [])
        }
    }
#endif

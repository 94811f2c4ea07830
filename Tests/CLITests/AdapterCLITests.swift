import Foundation
import TestSupport
import Testing

/// `--adapter-path` end to end on the bundled stories-260k: a LoRA on the last layer's
/// qkv_proj changes the greedy story, `run --adapter-path` tells the same story as `fuse` then
/// `run` of the fused model, and a tensor of the wrong shape is exit 65 naming it.
@Suite("phikit run --adapter-path")
struct AdapterCLITests {
    @Test func runTimeAdapterTellsTheFusedModelsStory() throws {
        let work = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let adapter = work.appendingPathComponent("adapter")
        try TestAdapters.write(to: adapter)
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
        try TestAdapters.write(to: adapter, aShape: [64, 3])
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
            try TestAdapters.write(to: adapter, key: "self_attn.o_proj", layers: 0..<8, inputs: 1024, outputs: 1024)
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

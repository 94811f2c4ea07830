import Foundation
import PhiFormats
import PhiKit
import Testing

/// Invariants of convert beyond the goldens: dequantize round trip, Hub ids resolved
/// through the HF cache, the model store, threads not changing the result.
@Suite("convert behaviour")
struct ConvertBehaviourTests {
    @Test("quantize then dequantize: norms unchanged, weights within a step")
    func dequantizeRoundTrip() throws {
        let work = try ConvertFixtures.temporaryDirectory("roundtrip")
        defer { try? FileManager.default.removeItem(at: work) }
        let src = work.appendingPathComponent("src")
        try ConvertFixtures.buildSource("phi4-fp32", into: src)
        var q = ConvertOptions(
            source: src.path, output: work.appendingPathComponent("q").path, environment: [:])
        q.quantize = true
        q.bits = 8
        q.groupSize = 32
        q.threads = 2
        _ = try convert(q)
        var d = ConvertOptions(
            source: q.output!, output: work.appendingPathComponent("d").path, environment: [:])
        d.dequantize = true
        d.threads = 2
        let summary = try convert(d)
        #expect(summary.bits == nil)
        // Readable like any directory the user makes, not mkdtemp's 0700.
        let mask = umask(0)
        umask(mask)
        let mode = try FileManager.default.attributesOfItem(atPath: d.output!)[.posixPermissions]
        #expect((mode as? NSNumber)?.uint16Value == 0o777 & ~UInt16(mask))

        let original = try ModelWeights(directory: src.path)
        let restored = try ModelWeights(directory: d.output!)
        #expect(original.tensorNames == restored.tensorNames)
        for name in original.tensorNames {
            let (af, a) = try #require(original.tensor(name))
            let (bf, b) = try #require(restored.tensor(name))
            #expect(a.shape == b.shape && b.dtype == .f32)
            let x = af.data(a).bindMemory(to: Float.self)
            let y = bf.data(b).bindMemory(to: Float.self)
            if a.shape.count == 1 {
                #expect(Array(x) == Array(y), "\(name) must be copied unchanged")
                continue
            }
            // 8 bits, group 32: about half a step of the group's range; mlx's exact-edge rescale
            // can clip the far end a little, so allow a whole step.
            let cols = a.shape[1]
            for g in stride(from: 0, to: x.count, by: 32) where g % cols + 32 <= cols {
                let group = x[g..<(g + 32)]
                let step = (group.max()! - group.min()!) / 255
                let err = zip(group, y[g..<(g + 32)]).map { abs($0 - $1) }.max()!
                #expect(err <= step * 1.0 + 1e-6, "\(name) group \(g / 32): \(err) vs step \(step)")
            }
        }
        // Dequantized config drops both quantization keys.
        let config = try ConvertFixtures.json(URL(fileURLWithPath: d.output! + "/config.json"))
        #expect(config["quantization"] == nil && config["quantization_config"] == nil)
    }

    @Test("a Hub id resolves through HF_HUB_CACHE; no -o writes into the model store")
    func hubIdAndModelStore() throws {
        let work = try ConvertFixtures.temporaryDirectory("hub")
        defer { try? FileManager.default.removeItem(at: work) }
        let cache = work.appendingPathComponent("hub")
        let repo = cache.appendingPathComponent("models--tiny-org--Tiny-Phi-4")
        let commit = String(repeating: "ab", count: 20)
        try ConvertFixtures.buildSource(
            "phi4-bf16", into: repo.appendingPathComponent("snapshots/\(commit)"))
        try FileManager.default.createDirectory(
            at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/main"))
        let home = work.appendingPathComponent("phikit-home")

        var o = ConvertOptions(
            source: "tiny-org/Tiny-Phi-4",
            environment: [
                "HF_HUB_CACHE": cache.path, "PHIKIT_HOME": home.path,
                "PHIKIT_REGISTRY": work.appendingPathComponent("none.json").path,
            ])
        o.quantize = true
        o.threads = 1
        let summary = try convert(o)
        #expect(summary.outputDirectory == home.path + "/models/Tiny-Phi-4-4bit")
        let card = try String(
            contentsOfFile: summary.outputDirectory + "/README.md", encoding: .utf8)
        #expect(card.contains("base_model: tiny-org/Tiny-Phi-4\n"))

        // Not cached → 66 with a pull hint; nothing written.
        o.source = "tiny-org/Absent"
        #expect {
            try convert(o)
        } throws: { error in
            guard let e = error as? any UserFacingError else { return false }
            return e.exitCode == .noInput && (e.hint ?? "").contains("phikit pull")
        }
    }

    @Test("store names")
    func storeNames() {
        #expect(
            ModelStore.modelName(source: "Phi-3.5-mini-instruct", bits: 4, floatType: nil)
                == "Phi-3.5-mini-instruct-4bit")
        #expect(
            ModelStore.modelName(source: "Phi-3.5-mini-instruct-4bit", bits: nil, floatType: "bf16")
                == "Phi-3.5-mini-instruct-bf16")
        #expect(ModelStore.root(environment: ["HOME": "/h"]) == "/h/.local/share/phikit")
        #expect(ModelStore.root(environment: ["PHIKIT_HOME": "/p", "HOME": "/h"]) == "/p")
    }

    @Test("the result does not depend on the thread count")
    func threadsDoNotChangeBytes() throws {
        let work = try ConvertFixtures.temporaryDirectory("threads")
        defer { try? FileManager.default.removeItem(at: work) }
        let src = work.appendingPathComponent("src")
        try ConvertFixtures.buildSource("phi35-fp16", into: src)
        var hashes: [String] = []
        for threads in [1, 3] {
            var o = ConvertOptions(
                source: src.path, output: work.appendingPathComponent("o\(threads)").path,
                environment: [:])
            o.quantize = true
            o.bits = 3
            o.groupSize = 32
            o.threads = threads
            _ = try convert(o)
            hashes.append(try SHA256Hasher.hex(of: o.output! + "/model.safetensors"))
        }
        #expect(hashes[0] == hashes[1])
    }
}

import Foundation
import PhiFormats
import PhiHub
import Testing

@testable import PhiKit

/// Two tiny model directories' files: a bf16 one (96 + 8 = 104 parameters) and an MLX 4-bit
/// group-64 one (a 4 × 64 Linear, packed: 256 parameters).
enum TinyFiles {
    static func bf16() throws -> [String: [UInt8]] {
        try files(
            config: #"{"model_type": "phi3", "torch_dtype": "bfloat16"}"#,
            tensors: [
                (TensorSpec(name: "lm_head.weight", dtype: .bf16, shape: [12, 8]), 192),
                (TensorSpec(name: "model.norm.weight", dtype: .bf16, shape: [8]), 16),
            ])
    }

    static func q4() throws -> [String: [UInt8]] {
        try files(
            config: #"{"model_type": "phi3", "quantization": {"group_size": 64, "bits": 4}}"#,
            tensors: [
                (TensorSpec(name: "lm_head.weight", dtype: .u32, shape: [4, 8]), 128),
                (TensorSpec(name: "lm_head.scales", dtype: .bf16, shape: [4, 1]), 8),
                (TensorSpec(name: "lm_head.biases", dtype: .bf16, shape: [4, 1]), 8),
            ])
    }

    private static func files(
        config: String, tensors: [(TensorSpec, Int)]
    ) throws -> [String: [UInt8]] {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tiny-\(UUID()).safetensors"
        ).path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try SafeTensorsWriter.write(
            path: path, tensors: tensors.map { ($0.0, [UInt8](repeating: 1, count: $0.1)) },
            metadata: ["format": "mlx"])
        return [
            "config.json": Array(config.utf8),
            "model.safetensors": Array(try Data(contentsOf: URL(fileURLWithPath: path))),
        ]
    }
}

@Suite("list")
struct ListTests {
    let commitA = String(repeating: "a", count: 40)
    let commitB = String(repeating: "b", count: 40)

    func machine() throws -> (URL, [String: String]) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "phikit-list-\(UUID())")
        let cache = root.appendingPathComponent("hub")
        var weights = try TinyFiles.bf16()
        try HandMadeCache.add(weights, repoID: "org/tiny", commit: commitA, root: cache)
        weights["config.json"] = Array(#"{"model_type": "phi3", "v": 2}"#.utf8)
        try HandMadeCache.add(weights, repoID: "org/tiny", commit: commitB, ref: "v2", root: cache)
        let store = root.appendingPathComponent("store/models/tiny-4bit")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        for (name, bytes) in try TinyFiles.q4() {
            try Data(bytes).write(to: store.appendingPathComponent(name))
        }
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("store/models/x.incomplete-AbCdEf"),
            withIntermediateDirectories: true)
        return (
            root,
            ["HF_HUB_CACHE": cache.path, "PHIKIT_HOME": root.appendingPathComponent("store").path]
        )
    }

    @Test("formats, parameters, sizes with shared blobs counted once")
    func models() throws {
        let (root, env) = try machine()
        defer { try? FileManager.default.removeItem(at: root) }
        let list = listModels(ListOptions(environment: env))
        #expect(list.models.map(\.name) == ["org/tiny", "org/tiny", "tiny-4bit"])
        #expect(list.models.map(\.revisionLabel) == ["main (aaaaaaa)", "v2 (bbbbbbb)", "-"])
        let (a, b, q) = (list.models[0], list.models[1], list.models[2])
        #expect(a.format == "bf16" && a.parameters == 104 && a.complete)
        #expect(
            q.format == "mlx q4 g64" && q.parameters == 256 && q.complete && q.source == "converted"
        )
        let weights = try TinyFiles.bf16()["model.safetensors"]!.count
        #expect(a.sizeOnDisk == weights + 49 && b.sizeOnDisk == weights + 30)
        // The shared weights blob once, both configs, the store model.
        #expect(list.totalSize == weights + 49 + 30 + q.sizeOnDisk)
        var options = ListOptions(environment: env)
        options.pattern = "TINY-4"
        #expect(listModels(options).models.map(\.name) == ["tiny-4bit"])
        options.pattern = nil
        options.sort = .size
        let sizes = listModels(options).models.map(\.sizeOnDisk)
        #expect(sizes == sizes.sorted(by: >))
    }

    @Test("incomplete: a file of the saved listing missing, a partial download, broken weights")
    func incomplete() throws {
        let (root, env) = try machine()
        defer { try? FileManager.default.removeItem(at: root) }
        let repo = root.appendingPathComponent("hub/models--org--tiny")
        try FileManager.default.removeItem(
            at: repo.appendingPathComponent("snapshots/\(commitA)/config.json"))
        let blob = try FileManager.default.contentsOfDirectory(atPath: repo.path + "/blobs").first {
            $0.count == 64
        }!
        try Data([1, 2]).write(to: repo.appendingPathComponent("blobs/\(blob).1a2b3c4d.incomplete"))
        let list = listModels(ListOptions(environment: env))
        let a = list.models[0]
        #expect(!a.complete)
        #expect(a.problems == ["missing 1 files: config.json", "1 partial downloads"])
        #expect(list.partialBytes == 2)
        // A snapshot without a saved listing is judged by its weights.
        try HandMadeCache.add(
            ["model.safetensors": [0, 1, 2]], repoID: "org/bad", commit: commitA,
            root: root.appendingPathComponent("hub"), writeListing: false)
        var options = ListOptions(environment: env)
        options.pattern = "org/bad"
        let bad = try #require(listModels(options).models.first)
        #expect(!bad.complete && bad.problems.count == 1)
    }

    @Test("--available: registry entries and their state in the cache")
    func available() throws {
        let (root, env) = try machine()
        defer { try? FileManager.default.removeItem(at: root) }
        let registry = root.appendingPathComponent("registry.json")
        try #"""
        {"models": [
          {"name": "tiny", "repo": "org/tiny"},
          {"name": "tiny-v2", "repo": "org/tiny", "revision": "v2"},
          {"name": "tiny-v3", "repo": "org/tiny", "revision": "v3"},
          {"name": "other", "repo": "org/other", "downloadSize": 10},
          {"name": "demo", "path": "demo"}
        ]}
        """#.write(to: registry, atomically: true, encoding: .utf8)
        var environment = env
        environment["PHIKIT_REGISTRY"] = registry.path
        environment["XDG_CONFIG_HOME"] = root.path
        let models = try availableModels(environment: environment)
        #expect(
            models.map(\.status) == [
                "downloaded", "downloaded", "other revision", "not downloaded", "bundled",
            ])
        try FileManager.default.removeItem(
            at: root.appendingPathComponent(
                "hub/models--org--tiny/snapshots/\(commitA)/config.json"))
        #expect(try availableModels(environment: environment)[0].status == "incomplete")
    }
}

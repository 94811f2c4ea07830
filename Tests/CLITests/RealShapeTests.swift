import Foundation
import TestSupport
import Testing

/// Phi-3.5-mini-instruct with its real config.json, index and shapes, but sparse shards (the
/// data is a hole made by ftruncate): inspect must report the model's real parameter count,
/// 3,821,079,552 = the index's total_size 7,642,159,104 / 2 bytes per bf16.
@Suite("inspect on a real-shaped model")
struct RealShapeTests {
    @Test func phi35MiniParameterCount() throws {
        let fixture = try TestPaths.sharedURL("microsoft--Phi-3.5-mini-instruct")
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["config.json", "model.safetensors.index.json"] {
            try FileManager.default.copyItem(
                at: fixture.appendingPathComponent(name),
                to: dir.appendingPathComponent(name))
        }
        let index = try #require(
            JSONSerialization.jsonObject(
                with: Data(contentsOf: dir.appendingPathComponent("model.safetensors.index.json")))
                as? [String: Any])
        let weightMap = try #require(index["weight_map"] as? [String: String])
        let totalSize = try #require((index["metadata"] as? [String: Any])?["total_size"] as? Int)

        // Shapes from the config, as transformers' Phi3 modules create them.
        let (hidden, inter, vocab, layers) = (3072, 8192, 32064, 32)
        func shape(_ name: String) -> [Int] {
            switch name.split(separator: ".").suffix(2).first! {
            case "embed_tokens", "lm_head": [vocab, hidden]
            case "qkv_proj": [3 * hidden, hidden]
            case "o_proj": [hidden, hidden]
            case "gate_up_proj": [2 * inter, hidden]
            case "down_proj": [hidden, inter]
            default: [hidden]  // norms
            }
        }
        #expect(weightMap.count == 3 + 6 * layers)
        for shard in Set(weightMap.values) {
            let tensors = weightMap.filter { $0.value == shard }.keys.sorted()
                .map { TinyModel.Tensor(name: $0, dtype: "BF16", shape: shape($0)) }
            try TinyModel.writeSafetensors(
                tensors, to: dir.appendingPathComponent(shard),
                metadata: ["format": "pt"], sparse: true)
        }

        let r = try Phikit.run("inspect", dir.path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(totalSize / 2 == 3_821_079_552)
        #expect(r.stdout.hasSuffix("195 tensors, 3,821,079,552 parameters, 7.64 GB, bf16\n"))
        #expect(
            r.stdout.contains(
                "config:       phi3, hidden 3072, intermediate 8192, 32 layers, 32 heads, 32 kv heads"
            ))
        #expect(r.stdout.contains("rope longrope"))

        let json = try Phikit.run("inspect", dir.path, "--json")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["tensor_bytes"] as? Int == totalSize)
        #expect(object["parameter_count"] as? Int == totalSize / 2)
    }
}

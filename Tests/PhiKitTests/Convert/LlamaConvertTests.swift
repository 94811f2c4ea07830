import Foundation
import PhiEngine
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// Hugging Face llama safetensors through convert: the tiny llama models of tiny_models.py
/// (SmolLM2's proportions, tied; Llama 3.x's llama3 rope scaling, untied), float32 from the
/// seed, converted by phikit at 4 bits (group 64) and 8 bits (group 32). Every output tensor
/// must be byte-identical to mlx_lm.convert's (scripts/engine/make_llama_goldens.py), verify
/// must pass the output, and the engine must load it as a llama model.
@Suite("llama: convert as mlx_lm.convert")
struct LlamaConvertTests {
    static let goldens = ["tiny-llama-smol.json", "tiny-llama3.json"]
    static func golden(_ name: String) throws -> JSONValue {
        try JSONValue(
            parsing: [UInt8](
                Data(
                    contentsOf: TestPaths.repository.appendingPathComponent(
                        "Tests/PhiEngineTests/Fixtures/engine/" + name))))
    }

    @Test(arguments: goldens)
    func convertsAsMlxLm(_ name: String) throws {
        let golden = try Self.golden(name)
        let work = try ConvertFixtures.temporaryDirectory("llama")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("source")
        try Self.writeSource(golden, to: source)
        for (i, variant) in try #require(golden["mlx"]?.arrayValue).enumerated() {
            let output = work.appendingPathComponent("out\(i)")
            var options = ConvertOptions(source: source.path, output: output.path, environment: [:])
            options.quantize = true
            options.bits = variant["quantization"]?["bits"]?.intValue
            options.groupSize = variant["quantization"]?["group_size"]?.intValue
            _ = try convert(options)
            let expected = try #require(variant["tensor_sha256"]?.objectValue)
            let written = try ModelWeights(directory: output.path)
            #expect(Set(written.tensorNames) == Set(expected.map(\.key)), "\(name) \(i): tensor names")
            for (tensor, hash) in expected {
                guard let (file, info) = written.tensor(tensor) else { continue }
                #expect(SHA256Hasher.hex(of: file.data(info)) == hash.stringValue, "\(name) \(i): \(tensor)")
            }
            let report = try verify(VerifyOptions(model: output.path, environment: [:]))
            #expect(report.layers.first { $0.layer == .model }?.status == .passed, "\(name) \(i)")
            #expect(try ModelArchitectures.load(directory: output.path) is LlamaModel)
        }
    }

    /// config.json, float32 weights from the seed in LlamaSchema's order, and the bundled
    /// stories tokenizer (as the golden script's source).
    static func writeSource(_ golden: JSONValue, to dir: URL) throws {
        let config = try #require(golden["config"])
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(config.serialized().utf8).write(to: dir.appendingPathComponent("config.json"))
        for file in ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"] {
            try FileManager.default.copyItem(
                at: TestPaths.storiesModel.appendingPathComponent(file),
                to: dir.appendingPathComponent(file))
        }
        let layout = try ModelLayout(
            config: try ModelConfig(data: Array(config.serialized().utf8), source: "config.json"))
        let tensors = SeededWeights.numbered(
            layout.modules.map { ($0.weightName, $0.shape) },
            seed: UInt64(try #require(golden["seed"]?.intValue)),
            amplitude: Float(try #require(golden["amplitude"]?.doubleValue)))
        let writer = try SafeTensorsWriter(
            path: dir.appendingPathComponent("model.safetensors").path,
            tensors: tensors.map { TensorSpec(name: $0.name, dtype: .f32, shape: $0.shape) },
            metadata: ["format": "pt"])
        for t in tensors { try t.values.withUnsafeBytes { try writer.write($0) } }
        try writer.finish()
    }
}

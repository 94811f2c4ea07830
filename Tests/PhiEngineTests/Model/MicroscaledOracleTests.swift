import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Tiny random Phi-3.5- and Phi-4-mini-shaped models in every format mlx_lm.convert writes
/// beyond plain affine (mxfp4, nvfp4, mxfp8, the four mixed recipes; affine 4-bit g64 beside
/// them), against the float64 oracle of scripts/engine/make_mx_oracle.py: the stored weights
/// dequantized exactly, a float64 forward pass, greedy. phikit rebuilds each model
/// byte-identical to mlx_lm.convert's (tensor sha256s), decodes 40 tokens greedily, and the
/// tokens must follow the oracle (`OracleRun`: argmax or a near-tie).
@Suite("mx formats: greedy tokens follow the float64 oracle")
struct MicroscaledOracleTests {
    static let oracle: JSONValue = try! JSONValue(
        parsing: [UInt8](
            Data(contentsOf: EngineGoldens.directory.appendingPathComponent("tiny-mx-oracle.json")))
    )
    static let cases: [String] = ["phi35", "phi4mini"].flatMap { model in
        (oracle["models"]?[model]?["variants"]?.arrayValue ?? []).compactMap {
            $0["label"]?.stringValue.map { "\(model) \($0)" }
        }
    }

    @Test(arguments: cases)
    func followsOracle(_ name: String) throws {
        let parts = name.split(separator: " ").map(String.init)
        let model = try #require(Self.oracle["models"]?[parts[0]])
        let entry = try #require(
            model["variants"]?.arrayValue?.first { $0["label"]?.stringValue == parts[1] })
        let variant = try JSONDecoder().decode(OracleRun.self, from: Data(entry.serialized().utf8))
        let source = try TinyModels.writeFloat(
            config: try #require(model["config"]),
            seed: UInt64(try #require(Self.oracle["seed"]?.intValue)),
            amplitude: Float(try #require(Self.oracle["amplitude"]?.doubleValue)))
        let dir = try TinyModels.writeQuantized(
            from: source.path, quantization: try #require(entry["quantization"]))
        let hashes = try #require(entry["tensor_sha256"]?.objectValue)
        #expect(
            try TinyModels.tensorHashes(dir.path)
                == Dictionary(
                    uniqueKeysWithValues: hashes.map { ($0.key, $0.value.stringValue ?? "") }),
            "the model as mlx_lm.convert wrote it")

        let prompt = try #require(Self.oracle["prompt"]?.arrayValue).compactMap(\.intValue)
        let session = try InferenceSession(model: try Phi3Model.load(directory: dir.path))
        let tokens = try greedy(session, prompt: prompt, count: variant.greedy.count)
        let same = variant.expectFollowed(by: tokens, name)
        print("\(name): \(same) of \(tokens.count) greedy tokens equal the float64 oracle's")
    }
}

import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Tiny random `model_type: phi` models (scripts/engine/make_phi_goldens.py):
/// - phi2: Phi-2's proportions (MHA, partial rotary 0.4);
/// - phi15qk: rotary 0.5, qk_layernorm, grouped keys 6:2, 3 layers, layer_norm_eps 1e-6;
/// - phiwide: head_dim 40, rotary 0.4, grouped keys 4:2.
/// Each with its own seed, against transformers' PhiForCausalLM in float32, and (the models
/// mlx-lm loads) mlx_lm.convert's 4- and 8-bit copies against a float64 reference of the
/// stored weights.
@Suite("tiny phi models against transformers and a float64 reference")
struct TinyPhiTests {
    struct Quantized: Decodable {
        let prompt: [Int]
        let run: OracleRun
        init(from decoder: any Decoder) throws {
            prompt = try decoder.container(keyedBy: Key.self).decode([Int].self, forKey: .prompt)
            run = try OracleRun(from: decoder)
        }
        enum Key: CodingKey { case prompt }
    }

    static let golden: JSONValue = try! JSONValue(
        parsing: [UInt8](
            Data(contentsOf: EngineGoldens.directory.appendingPathComponent("tiny-phi.json"))))
    static let names = ["phi2", "phi15qk", "phiwide"]
    /// As TinyModelTests: error relative to the reference row's largest magnitude.
    static let tolerance: Float = 1e-4

    static func model(_ name: String) throws -> JSONValue {
        try #require(golden["models"]?.arrayValue?.first { $0["name"]?.stringValue == name })
    }

    /// The float32 (or bf16) model `name`, written from its seed.
    static func write(_ name: String, dtype: DType = .f32) throws -> TemporaryModel {
        let model = try model(name)
        return try TinyModels.writeFloat(
            config: try #require(model["config"]),
            seed: UInt64(try #require(model["seed"]?.intValue)),
            amplitude: Float(try #require(model["amplitude"]?.doubleValue)), dtype: dtype)
    }

    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue?) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(try #require(value).serialized().utf8))
    }

    @Test(
        "float32 and bfloat16 weights: logits within 1e-4 of transformers, greedy identical",
        arguments: names)
    func againstTransformers(_ name: String) throws {
        for (dtype, key) in [(DType.f32, "float32"), (.bf16, "bfloat16")] {
            let dir = try Self.write(name, dtype: dtype)
            let model = try ModelArchitectures.load(directory: dir.path)
            #expect(model is PhiModel)
            let session = try InferenceSession(model: model)
            let cases = try Self.decode([EngineGoldens.Case].self, Self.model(name)[key])
            #expect(cases.count == 2)
            for c in cases {
                session.reset()
                let difference = relativeDifference(try session.prefill(c.prompt), c.lastLogits)
                #expect(difference < Self.tolerance, "\(name) \(key) \(c.prompt.count) tokens")
                print("\(name) \(key) \(c.prompt.count)-token prompt: relative error \(difference)")
                session.reset()
                let tokens = try greedy(session, prompt: c.prompt, count: c.greedy.count)
                #expect(tokens == c.greedy, "\(name) \(key) \(c.prompt.count) tokens")
            }
        }
    }

    @Test("cached decode steps equal a full forward of the whole sequence", arguments: names)
    func cachedDecodeEqualsFullForward(_ name: String) throws {
        let dir = try Self.write(name)
        let model = try PhiModel.load(directory: dir.path)
        let session = try InferenceSession(model: model)
        var sequence = [1, 17, 200, 33, 5, 99]
        var logits = Array(try session.prefill(sequence))
        for _ in 0..<10 {
            let next = argmax(logits.withUnsafeBufferPointer { $0 })
            sequence.append(next)
            logits = Array(try session.step(next))
            // a fresh session computing the whole sequence in prompt blocks of 3
            let full = try InferenceSession(
                model: model, maxContext: nil, pool: session.pool, block: 3)
            #expect(Array(try full.prefill(sequence)) == logits, "\(name) at \(sequence.count)")
        }
    }

    static let quantizedCases: [String] = names.flatMap { name in
        (0..<((try? model(name))?["mlx"]?.arrayValue?.count ?? 0)).map { "\(name) \($0)" }
    }

    @Test("mlx_lm.convert 4- and 8-bit copies: greedy follows the float64 reference",
        arguments: quantizedCases)
    func quantized(_ label: String) throws {
        let parts = label.split(separator: " ")
        let name = String(parts[0])
        let entry = try #require(Self.model(name)["mlx"]?.arrayValue?[Int(parts[1])!])
        let variant = try Self.decode(Quantized.self, entry)
        let source = try Self.write(name)
        let dir = try TinyModels.writeQuantized(
            from: source.path, quantization: try #require(entry["quantization"]))
        let hashes = try Self.decode([String: String].self, entry["tensor_sha256"])
        #expect(try TinyModels.tensorHashes(dir.path) == hashes, "as mlx_lm.convert wrote it")
        let session = try InferenceSession(model: try PhiModel.load(directory: dir.path))
        let tokens = try greedy(session, prompt: variant.prompt, count: variant.run.greedy.count)
        let same = variant.run.expectFollowed(by: tokens, label)
        print("\(label) \(entry["quantization"]!.serialized()): \(same) of \(tokens.count) tokens")
    }
}

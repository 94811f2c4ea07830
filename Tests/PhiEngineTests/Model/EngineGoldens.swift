import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// The golden files of scripts/engine/make_engine_goldens.py (transformers 5.23 and mlx_lm
/// 0.32 on the CPU; see that script for how each number was made).
enum EngineGoldens {
    struct Case: Decodable {
        let prompt: [Int]
        /// Logits of the prompt's last position, from one full forward pass of the reference.
        let lastLogits: [Float]
        /// The reference's greedy continuation (never stopped by an end token).
        let greedy: [Int]
        /// Smallest top-1 − top-2 logit gap along the reference's greedy run.
        let greedyMinMargin: Double

        enum CodingKeys: String, CodingKey {
            case prompt, greedy
            case lastLogits = "last_logits"
            case greedyMinMargin = "greedy_min_margin"
        }
    }

    struct Quantized {
        /// config.json's `quantization` object as mlx_lm.convert wrote it.
        let quantization: JSONValue
        /// SHA-256 of every tensor's bytes in mlx_lm.convert's output.
        let tensorHashes: [String: String]
        let cases: [Case]
    }

    /// A tiny random model's goldens: transformers float32 / bfloat16, mlx quantized.
    struct Tiny {
        let seed: UInt64
        let amplitude: Float
        let config: JSONValue
        let mlxConfig: JSONValue
        let float32: [Case]
        let bfloat16: [Case]
        let mlx: [Quantized]
    }

    struct Stories {
        let story: Case
        let prompts: [Case]
        let mlx: [Quantized]
    }

    static let directory: URL = Bundle.module.resourceURL!.appendingPathComponent(
        "Fixtures/engine")

    /// The repository's bundled TinyStories model (models/stories-260k).
    static let storiesModel: String = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/stories-260k").path

    static func tiny(_ name: String) throws -> Tiny {
        let json = try load(name)
        return Tiny(
            seed: UInt64(try #require(json["seed"]?.intValue)),
            amplitude: Float(try #require(json["amplitude"]?.doubleValue)),
            config: try #require(json["config"]), mlxConfig: try #require(json["mlx_config"]),
            float32: try cases(json["float32"]), bfloat16: try cases(json["bfloat16"]),
            mlx: try quantized(json["mlx"]))
    }

    static func stories() throws -> Stories {
        let json = try load("stories-260k.json")
        return Stories(
            story: try cases(JSONValue.array([try #require(json["story"])]))[0],
            prompts: try cases(json["prompts"]), mlx: try quantized(json["mlx"]))
    }

    private static func load(_ name: String) throws -> JSONValue {
        try JSONValue(parsing: [UInt8](Data(contentsOf: directory.appendingPathComponent(name))))
    }

    private static func cases(_ value: JSONValue?) throws -> [Case] {
        let text = try #require(value).serialized()
        return try JSONDecoder().decode([Case].self, from: Data(text.utf8))
    }

    private static func quantized(_ value: JSONValue?) throws -> [Quantized] {
        try #require(value?.arrayValue).map { entry in
            let hashes = try #require(entry["tensor_sha256"]?.objectValue)
            return Quantized(
                quantization: try #require(entry["quantization"]),
                tensorHashes: Dictionary(
                    uniqueKeysWithValues: hashes.map { ($0.key, $0.value.stringValue ?? "") }),
                cases: try cases(entry["cases"]))
        }
    }
}

/// max |a - b| / max |b|: the error relative to the reference row's scale.
func relativeDifference(_ a: UnsafeBufferPointer<Float>, _ b: [Float]) -> Float {
    precondition(a.count == b.count)
    var worst: Float = 0
    var scale: Float = 0
    for i in 0..<b.count {
        worst = max(worst, abs(a[i] - b[i]))
        scale = max(scale, abs(b[i]))
    }
    return worst / max(scale, .leastNormalMagnitude)
}

/// Greedy decoding through the session: `count` tokens after `prompt` (no stop tokens).
func greedy(_ session: InferenceSession, prompt: [Int], count: Int) throws -> [Int] {
    var logits = try session.prefill(prompt)
    var out: [Int] = []
    for i in 0..<count {
        let token = argmax(logits)
        out.append(token)
        if i + 1 < count { logits = try session.step(token) }
    }
    return out
}

func argmax(_ logits: UnsafeBufferPointer<Float>) -> Int {
    var best = 0
    for i in logits.indices where logits[i] > logits[best] { best = i }
    return best
}

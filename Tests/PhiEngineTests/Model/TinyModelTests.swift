import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Random-weight models of both Phi-3 shapes and two llama ones against the references:
/// - tiny-phi35: MHA, LongRoPE with different short/long factors, untied, sliding window 48;
/// - tiny-phi4mini: GQA 8:2, partial rotary 0.75, tied embeddings, LongRoPE;
/// - tiny-llama-smol: SmolLM2's proportions, GQA 3:1, tied (scripts/engine/make_llama_goldens.py);
/// - tiny-llama3: Llama 3.x's `llama3` rope scaling over all three frequency bands, GQA 4:1.
/// The phi3 ones have original_max_position_embeddings 32: the 12-token prompt's greedy run
/// crosses it (transformers then recomputes the sequence with the long factors), the 40-token
/// prompt starts beyond it.
@Suite("tiny Phi-3.5 / Phi-4-mini / llama shapes against transformers and mlx_lm")
struct TinyModelTests {
    static let models = [
        "tiny-phi35.json", "tiny-phi4mini.json", "tiny-llama-smol.json", "tiny-llama3.json",
    ]

    /// Error of the last-position logits relative to the reference row's largest magnitude.
    /// float32 weights: transformers fp32. bfloat16 weights: transformers widening them to
    /// fp32 (exact) and computing in fp32, which is also what phikit does, so the bound is
    /// the same: 1e-4 (measured: ~1e-6).
    static let floatTolerance: Float = 1e-4
    /// Quantized weights against mlx's fp32 math on the same packed weights: phikit's kernels
    /// round the activations to 16 bits per group (pk_matvec.h), which moves these random
    /// models' logits by up to ~1.5e-4; greedy tokens stay identical.
    static let quantizedTolerance: Float = 5e-4

    @Test(
        "float32 weights: logits within 1e-4 of transformers, greedy identical", arguments: models)
    func float32(_ name: String) throws {
        let golden = try EngineGoldens.tiny(name)
        let dir = try TinyModels.writeFloat(
            config: golden.config, seed: golden.seed, amplitude: golden.amplitude)
        try check(dir.path, golden.float32, tolerance: Self.floatTolerance, label: name + " float32")
    }

    @Test(
        "bfloat16 weights: logits within 1e-4 of transformers, greedy identical", arguments: models)
    func bfloat16(_ name: String) throws {
        let golden = try EngineGoldens.tiny(name)
        let dir = try TinyModels.writeFloat(
            config: golden.config, seed: golden.seed, amplitude: golden.amplitude, dtype: .bf16)
        try check(dir.path, golden.bfloat16, tolerance: Self.floatTolerance, label: name + " bfloat16")
    }

    @Test(
        "mlx_lm.convert -q copies (bits 2-8, groups 32-128, mixed): greedy as mlx_lm",
        arguments: models)
    func quantized(_ name: String) throws {
        let golden = try EngineGoldens.tiny(name)
        let source = try TinyModels.writeFloat(
            config: golden.mlxConfig, seed: golden.seed, amplitude: golden.amplitude)
        for variant in golden.mlx {
            let dir = try TinyModels.writeQuantized(
                from: source.path, quantization: variant.quantization)
            #expect(try TinyModels.tensorHashes(dir.path) == variant.tensorHashes)
            try check(dir.path, variant.cases, tolerance: Self.quantizedTolerance, label: name + " mlx")
        }
    }

    private func check(
        _ directory: String, _ cases: [EngineGoldens.Case], tolerance: Float, label: String
    ) throws {
        let model = try ModelArchitectures.load(directory: directory)
        let session = try InferenceSession(model: model)
        for c in cases {
            session.reset()
            let difference = relativeDifference(try session.prefill(c.prompt), c.lastLogits)
            #expect(difference < tolerance, "\(label): prompt of \(c.prompt.count) tokens")
            print("\(label) \(c.prompt.count)-token prompt: relative difference \(difference)")
            session.reset()
            let tokens = try greedy(session, prompt: c.prompt, count: c.greedy.count)
            #expect(tokens == c.greedy, "prompt of \(c.prompt.count) tokens")
        }
    }
}

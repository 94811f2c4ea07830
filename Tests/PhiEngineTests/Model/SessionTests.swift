import CKernels
import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Invariants of `InferenceSession` on the tiny models: the KV cache, the prompt blocks, the
/// threads and the kernel levels change how the work is done, not the result.
///
/// Bounds, relative to the largest logit: float weights take float32 paths everywhere
/// (1e-5). Quantized weights: the SIMD kernels round the activations to 16 bits per group
/// (pk_matvec.h), and the scalar level keeps float32 throughout; those differ by up to
/// ~2e-4 on these random-weight models (4e-5 on the trained stories model), far below the
/// weights' own 4-bit rounding. Bound: 5e-4.
@Suite("inference session invariants")
struct SessionTests {
    /// 45 tokens: past original_max_position_embeddings (32), so the LongRoPE switch happens
    /// inside the sequence, and past phi35's sliding window (48) when generating.
    static let tokens = [1] + (0..<44).map { ($0 * 37 + 11) % 380 + 3 }

    static func floatModel(_ name: String) throws -> (TemporaryModel, any CausalLanguageModel) {
        let golden = try EngineGoldens.tiny(name)
        let dir = try TinyModels.writeFloat(
            config: golden.config, seed: golden.seed, amplitude: golden.amplitude)
        return (dir, try ModelArchitectures.load(directory: dir.path))
    }

    static func quantizedModel(_ name: String) throws -> (TemporaryModel, any CausalLanguageModel) {
        let golden = try EngineGoldens.tiny(name)
        let source = try TinyModels.writeFloat(
            config: golden.mlxConfig, seed: golden.seed, amplitude: golden.amplitude)
        let dir = try TinyModels.writeQuantized(
            from: source.path, quantization: golden.mlx[0].quantization)
        return (dir, try ModelArchitectures.load(directory: dir.path))
    }

    /// Logits after feeding `tokens`: one prefill of all, or a prefill of `split` then steps.
    static func logits(
        _ session: InferenceSession, split: Int? = nil, tokens: [Int] = tokens
    ) throws -> [Float] {
        session.reset()
        guard let split else { return Array(try session.prefill(tokens)) }
        var last = try session.prefill(Array(tokens[..<split]))
        for t in tokens[split...] { last = try session.step(t) }
        return Array(last)
    }

    @Test(
        "cached decoding equals a full forward pass (float and 4-bit, both phi3 shapes, llama)",
        arguments: ["tiny-phi35.json", "tiny-phi4mini.json", "tiny-llama3.json"])
    func cachedEqualsFull(_ name: String) throws {
        for ((_, model), bound) in [
            (try Self.floatModel(name), Float(1e-5)), (try Self.quantizedModel(name), 5e-4),
        ] {
            let session = try InferenceSession(model: model)
            let full = try Self.logits(session)
            for split in [1, 10, 31, 33, 44] {
                let stepped = try Self.logits(session, split: split)
                #expect(
                    relativeDifference(stepped.withUnsafeBufferPointer { $0 }, full) < bound,
                    "split at \(split)")
            }
        }
    }

    @Test("block size, thread count and kernel level do not change the logits")
    func executionChoices() throws {
        for ((_, model), bound) in [
            (try Self.floatModel("tiny-phi35.json"), Float(1e-5)),
            (try Self.quantizedModel("tiny-phi4mini.json"), 5e-4),
        ] {
            let reference = try Self.logits(
                InferenceSession(model: model, maxContext: nil, threads: 1, isa: 0, block: 128))
            for (threads, isa, block) in [
                (1, Int32(PK_MV_ISA_SCALAR), 1), (2, Int32(PK_MV_ISA_AVX2), 7),
                (3, Int32(PK_MV_ISA_AVX512), 16), (2, pk_matvec_best_isa(), 128),
            ] {
                let session = try InferenceSession(
                    model: model, maxContext: nil, threads: threads, isa: isa, block: block)
                let logits = try Self.logits(session, split: 20)
                #expect(
                    relativeDifference(logits.withUnsafeBufferPointer { $0 }, reference) < bound,
                    "threads \(threads) isa \(isa) block \(block)")
            }
        }
    }

    @Test("reset forgets the cache: the same prompt gives the same logits again")
    func reset() throws {
        let (_, model) = try Self.floatModel("tiny-phi4mini.json")
        let session = try InferenceSession(model: model)
        let first = try Self.logits(session, split: 5)
        _ = try session.prefill([7, 8, 9])
        #expect(try Self.logits(session, split: 5) == first)
        #expect(session.position == Self.tokens.count)
    }

    @Test("input the session cannot take is refused with a typed error, state unchanged")
    func refusals() throws {
        let (_, model) = try Self.floatModel("tiny-phi4mini.json")
        let session = try InferenceSession(model: model, maxContext: 16)
        #expect(throws: SessionError.emptyPrompt) { try session.prefill([]) }
        #expect(throws: SessionError.tokenOutOfRange(token: 400, vocabularySize: 400)) {
            try session.prefill([1, 400])
        }
        #expect(throws: SessionError.tokenOutOfRange(token: -1, vocabularySize: 400)) {
            try session.step(-1)
        }
        #expect(session.position == 0)
        #expect(throws: SessionError.contextFull(needed: 17, limit: 16)) {
            try session.prefill(Array(repeating: 5, count: 17))
        }
        _ = try session.prefill(Array(repeating: 5, count: 16))
        #expect(throws: SessionError.contextFull(needed: 17, limit: 16)) { try session.step(5) }
        #expect(throws: SessionError.invalidContext(requested: 129, maximum: 128)) {
            try InferenceSession(model: model, maxContext: 129)
        }
        #expect(SessionError.contextFull(needed: 17, limit: 16).exitCode == .usage)
        #expect(SessionError.tokenOutOfRange(token: 1, vocabularySize: 1).exitCode == .dataError)
    }
}

import CKernels
import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Sessions with 8-bit activations: within the mode a token computes the same alone (decode
/// step), in a prompt block, in a verify block and in a decode batch, so prefix reuse stays
/// exact; the logits stay close to the 16-bit path's and differ from them (the path was taken).
/// A tiny Phi-3.5-shaped model widened to 256 so its 4-bit g64 matrices take the kernel.
@Suite("8-bit activations in a session")
struct Act8SessionTests {
    static func model(group: Int) throws -> (TemporaryModel, any CausalLanguageModel) {
        let dir = try directory(group: group)
        return (dir, try ModelArchitectures.load(directory: dir.path))
    }

    /// The model's directory: 4-bit affine, `group` 32 or 64.
    static func directory(group: Int) throws -> TemporaryModel {
        let golden = try EngineGoldens.tiny("tiny-phi35.json")
        var config = golden.mlxConfig
        config.set("hidden_size", .int(256))
        config.set("intermediate_size", .int(512))
        config.set("num_attention_heads", .int(8))  // head size 32, as the LongRoPE factors
        config.set("num_key_value_heads", .int(8))
        let source = try TinyModels.writeFloat(config: config, seed: golden.seed, amplitude: 0.25)
        return try TinyModels.writeQuantized(
            from: source.path,
            quantization: .object([("group_size", .int(group)), ("bits", .int(4)),
                ("mode", .string("affine"))]))
    }

    static let tokens = [1, 17, 200, 33, 5, 99, 250, 3, 42, 7, 11, 300, 8, 64, 120, 9]

    @Test("alone == block == verify == batch within the mode; close to 16-bit", arguments: [32, 64])
    func selfConsistent(group: Int) throws {
        let (dir, model) = try Self.model(group: group)
        try withExtendedLifetime(dir) {
            let isa = pk_matvec_best_isa()
            func session(_ width: ActivationWidth, block: Int = 512) throws -> InferenceSession {
                try InferenceSession(
                    model: model, maxContext: 64, threads: 2, isa: isa, block: block,
                    activationWidth: width)
            }
            let wide = try session(.int16)
            let exact = Array(try wide.prefill(Self.tokens))
            let a8 = try session(.int8)
            let block = Array(try a8.prefill(Self.tokens))
            // the same tokens in blocks of 5 and then one by one
            let small = try session(.int8, block: 5)
            let blocks = Array(try small.prefill(Self.tokens))
            let steps = try session(.int8)
            var last = try steps.prefill([Self.tokens[0]])
            for t in Self.tokens.dropFirst() { last = try steps.step(t) }
            #expect(block == blocks, "group \(group): blocks of 5 vs one block")
            #expect(block == Array(last), "group \(group): steps vs one block")
            // verify rows are the steps' logits
            let verifier = try session(.int8)
            _ = try verifier.prefill(Array(Self.tokens[..<10]))
            let rows = try verifier.verify(Array(Self.tokens[10...]))
            #expect(Array(rows[rows.count - 1]) == block, "group \(group): verify vs one block")
            // a decode batch of two act8 sessions
            let batch = try DecodeBatch(model: model, maxSequences: 2, pool: a8.pool)
            let other = try InferenceSession(
                model: model, maxContext: 64, pool: a8.pool, block: 512, activationWidth: .int8)
            let one = try InferenceSession(
                model: model, maxContext: 64, pool: a8.pool, block: 512, activationWidth: .int8)
            _ = try one.prefill(Array(Self.tokens.dropLast()))
            _ = try other.prefill([1, 5, 9])
            try batch.step([one, other], tokens: [Self.tokens.last!, 4])
            #expect(Array(one.logits) == block, "group \(group): batch vs one block")
            // a batched verify: one session's last 4 tokens as a block with another's 3
            let verifying = try DecodeBatch(model: model, maxSequences: 2, maxTokens: 8, pool: a8.pool)
            one.rewind(to: Self.tokens.count - 4)
            other.rewind(to: 3)
            let pair = [Array(Self.tokens.suffix(4)), [4, 8, 2]]
            let both = try verifying.verify([one, other], blocks: pair)
            #expect(Array(both[0][3]) == block, "group \(group): batched verify vs one block")
            let batched = (0..<3).map { Array(both[1][$0]) }  // the session's next call overwrites them
            other.rewind(to: 3)
            let own = try other.verify([4, 8, 2])
            #expect((0..<3).map { Array(own[$0]) } == batched, "group \(group): batched verify vs own")
            // close to the exact path, and not equal to it
            let gap = zip(block, exact).map { abs($0 - $1) }.max()!
            let spread = exact.map(abs).max()!
            // measured 0.33 (g64, blocks of 16) and 0.18 (g32, blocks of 8) of 7.3-7.7: random
            // weights at amplitude 0.25
            // make large activations, which 8 bits round coarsely
            #expect(gap > 0 && gap < 0.1 * spread, "group \(group): gap \(gap) of \(spread)")
        }
    }
}

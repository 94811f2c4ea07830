import Foundation
import Testing

@testable import PhiEngine

/// The per-sequence `Generator` on hand-made logits: OpenAI's penalties, the mask, NaN
/// logits, and draft verification (greedy exact, sampling by the acceptance rule).
@Suite("Generator")
struct GeneratorTests {
    static func generator(
        _ parameters: GenerationParameters, vocab: Int = 3, context: [Int] = [],
        stop: [Int] = []
    ) -> Generator {
        Generator(
            parameters: parameters, vocabularySize: vocab, stopTokens: StopTokens(stop),
            context: context, maxContext: 1000)
    }

    static func step(_ g: Generator, _ logits: [Float]) throws -> GeneratorStep {
        try logits.withUnsafeBufferPointer { try g.step($0) }
    }

    @Test("presence and frequency penalties: OpenAI's definition, over generated tokens only")
    func penalties() throws {
        let logits: [Float] = [1.0, 0.9, 0.0]
        var p = GenerationParameters.greedy(maxTokens: 10)
        p.presencePenalty = 0.5
        // The prompt's tokens do not count: 0 first, then 1 (0 is at 0.5), then 0 again
        // (0.5 against 0.4).
        let g = Self.generator(p, context: [0, 0, 0])
        let ids = try (0..<3).map { _ in try Self.step(g, logits).ids[0] }
        #expect(ids == [0, 1, 0])
        p.presencePenalty = 0
        p.frequencyPenalty = 0.06
        // 1.0 - 0.06k against 0.9 - 0.06m: 0 is taken twice before 1 is the best.
        let f = Self.generator(p)
        let freq = try (0..<4).map { _ in try Self.step(f, logits).ids[0] }
        #expect(freq == [0, 0, 1, 0])
    }

    @Test("NaN logits are an error whatever the sampler, not token 0 repeated")
    func nanLogits() throws {
        let nan = [Float](repeating: .nan, count: 3)
        for p in [
            GenerationParameters(temperature: 1, minP: 0.1, seed: 1),
            GenerationParameters(temperature: 1, topP: 0.5, seed: 1),
            GenerationParameters(temperature: 1, seed: 1), .greedy(maxTokens: 5),
        ] {
            #expect(throws: GenerationError.logitsNotANumber(generated: 0)) {
                try Self.step(Self.generator(p), nan)
            }
        }
    }

    @Test("the mask leaves only its tokens; end tokens only when the constraint can end")
    func mask() throws {
        final class OnlyTwo: TokenConstraint {
            var canEnd = false
            var isComplete = false
            func allow(_ mask: inout TokenMask) { mask.allow(2) }
            func forcedTokens(limit: Int) -> [Int] { [] }
            func advance(_ token: Int) throws { canEnd = true }
        }
        let g = Generator(
            parameters: .greedy(maxTokens: 5), vocabularySize: 4, stopTokens: StopTokens([3]),
            context: [], maxContext: 100, constraint: OnlyTwo())
        let logits: [Float] = [5, 4, 0, 9]
        #expect(try Self.step(g, logits).ids == [2])  // 3 is the end token: not yet
        let end = try Self.step(g, logits)  // now it may end, and it is the best
        #expect(end.ids.isEmpty && end.finish == .endOfSequence)

        var m = TokenMask(vocabularySize: 70, allowed: true)
        #expect(m.allowedCount == 70 && !m[70] && m[69])
        m.forbid(64)
        m.forbidAll()
        m.allow(contentsOf: [3, 64, 200])
        #expect(m.allowedTokens == [3, 64])
    }

    @Test("greedy verification keeps the agreeing prefix and corrects the first miss")
    func greedyVerify() throws {
        let g = Self.generator(.greedy(maxTokens: 10), vocab: 4)
        let rows: [[Float]] = [[0, 9, 0, 0], [0, 0, 9, 0], [9, 0, 0, 0], [0, 0, 0, 9]]
        let step = try Self.verify(g, draft: [1, 2, 3], rows)
        #expect(step.acceptedDraft == 2 && step.ids == [1, 2, 0] && step.finish == nil)
        let all = try Self.verify(Self.generator(.greedy(maxTokens: 10), vocab: 4), draft: [1, 2, 0], rows)
        #expect(all.acceptedDraft == 3 && all.ids == [1, 2, 0, 3])
    }

    @Test("sampled verification draws from the model's distribution, draft or not")
    func sampledVerifyDistribution() throws {
        let p = [0.5, 0.3, 0.2]
        let row = p.map { Float(log($0)) }
        var counts = [0, 0, 0]
        var accepted = 0
        let trials = 6000
        for seed in 0..<trials {
            let g = Self.generator(GenerationParameters(temperature: 1, seed: UInt64(seed)))
            let step = try Self.verify(g, draft: [1], [row, row])
            counts[step.ids[0]] += 1
            accepted += step.acceptedDraft
        }
        for i in 0..<3 {
            #expect(abs(Double(counts[i]) / Double(trials) - p[i]) < 0.025, "token \(i)")
        }
        // The draft (token 1) is kept with its probability, 0.3.
        #expect(abs(Double(accepted) / Double(trials) - 0.3) < 0.025)
    }

    static func verify(_ g: Generator, draft: [Int], _ rows: [[Float]]) throws -> GeneratorStep {
        let flat = rows.flatMap { $0 }
        let vocab = rows[0].count
        return try flat.withUnsafeBufferPointer { all in
            try g.verify(
                draft: draft,
                logits: (0...draft.count).map {
                    UnsafeBufferPointer(rebasing: all[($0 * vocab)..<(($0 + 1) * vocab)])
                })
        }
    }
}

import Foundation
import Testing

@testable import PhiEngine

/// Issue 17: parameters and logits at the edges, which gave wrong answers with exit 0.
@Suite("sampler at the edges")
struct SamplerHostileTests {
    private func sample(_ logits: [Float], _ parameters: GenerationParameters) -> Int {
        let sampler = Sampler(parameters: parameters, vocabularySize: logits.count)
        return logits.withUnsafeBufferPointer { sampler.sample($0, history: [Int]()) }
    }

    @Test("a temperature whose inverse overflows (1e-40) picks the greedy token, not the last")
    func tinyTemperature() {
        let logits: [Float] = [0.1, 3, 0.2, 0.3]
        for temperature in [Float(Double(1e-40)), .leastNonzeroMagnitude, 1e-30] {  // a subnormal, the least, a tiny normal
            let p = GenerationParameters(temperature: temperature, seed: 1)
            #expect(sample(logits, p) == 1, "temperature \(temperature)")
        }
    }

    @Test("NaN logits with min-p, top-p or top-k never read outside the buffer")
    func nanLogits() {
        let all = [Float](repeating: .nan, count: 8)
        var some: [Float] = [0, 1, .nan, 2, .nan, 0.5, -1, 0]
        for logits in [all, some] {
            for p in [
                GenerationParameters(temperature: 1, minP: 0.1, seed: 3),
                GenerationParameters(temperature: 1, topP: 0.5, seed: 3),
                GenerationParameters(temperature: 0.7, topP: 0.9, topK: 2, minP: 0.05, seed: 3),
                GenerationParameters(temperature: 1, seed: 3),
            ] {
                #expect((0..<logits.count).contains(sample(logits, p)))
            }
        }
        some[3] = .infinity
        #expect(sample(some, GenerationParameters(temperature: 1, minP: 0.1, seed: 3)) == 3)
    }
}

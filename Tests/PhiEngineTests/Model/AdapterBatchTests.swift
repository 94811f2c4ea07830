import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiEngine

/// Run-time adapters a session selects (`InferenceSession.adapter`), on stories-260k with a
/// rank-8 LoRA and a rank-8 DoRA on every Linear: a decode batch mixing both adapters and the
/// base steps each session exactly as alone (the base product shared, each row its own
/// correction), a prompt gives the same bits in one block as token by token (the correction
/// runs in chunks of tokens on the pool), and changing a session's adapter empties its cache.
@Suite("run-time adapters per session")
struct AdapterBatchTests {
    /// Pseudo-random factors on every Linear module of the model (`dora`: with magnitudes).
    static func adapter(_ config: ModelConfig, seed: UInt64, dora: Bool) throws -> LowRankAdapters {
        var state = seed
        func values(_ count: Int, scale: Float) -> [Float] {
            (0..<count).map { _ in
                state = state &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: state >> 11) % 2001 - 1000) / 1000 * scale
            }
        }
        let rank = 8
        var deltas: [String: LowRankDelta] = [:]
        for module in try ModelLayout(config: config).modules
        where module.kind == .linear && module.shape.count == 2 {
            let (outputs, inputs) = (module.shape[0], module.shape[1])
            deltas[module.path] = LowRankDelta(
                inputs: inputs, outputs: outputs, rank: rank,
                a: values(inputs * rank, scale: 0.2), b: values(outputs * rank, scale: 0.2),
                magnitude: dora ? values(outputs, scale: 0.5).map { 1 + $0 } : nil)
        }
        return LowRankAdapters(deltas)
    }

    static let model: Result<any CausalLanguageModel, any Error> = Result {
        let directory = TestPaths.storiesModel.path
        let config = try ModelConfig.load(directory: directory)
        return try ModelArchitectures.load(
            directory: directory, threads: 2,
            adapters: [adapter(config, seed: 7, dora: false), adapter(config, seed: 11, dora: true)])
    }

    static let prompts = [[1, 403, 407, 261, 30], [1, 9, 33, 120, 7, 88, 41], [1, 200, 13]]
    static let selected: [Int?] = [0, 1, nil]

    @Test("a batch mixing two adapters and the base steps each session as alone")
    func mixedBatchEqualsAlone() throws {
        let model = try Self.model.get()
        let pool = try WorkerPool.shared()
        func session(_ k: Int) throws -> InferenceSession {
            let s = try InferenceSession(model: model, maxContext: 64, pool: pool, block: 512)
            s.adapter = Self.selected[k]
            _ = try s.prefill(Self.prompts[k])
            return s
        }
        let alone = try (0..<3).map { k -> [[Float]] in
            let s = try session(k)
            return try (0..<8).map { _ in Array(try s.step(argmax(s.logits))) }
        }
        // the adapters change the answers, so the comparison below means something
        #expect(alone[0] != alone[2] && alone[1] != alone[2] && alone[0] != alone[1])
        let sessions = try (0..<3).map(session)
        let batch = try DecodeBatch(model: model, maxSequences: 3, pool: pool)
        for step in 0..<8 {
            try batch.step(sessions, tokens: sessions.map { argmax($0.logits) })
            for k in 0..<3 { #expect(Array(sessions[k].logits) == alone[k][step], "session \(k) step \(step)") }
        }
    }

    @Test("an adapted prompt gives the same bits in one block as token by token")
    func promptBlockEqualsSteps() throws {
        let model = try Self.model.get()
        let prompt = (0..<37).map { ($0 * 29 + 5) % 500 + 3 }
        for adapter in [0, 1] {
            let block = try InferenceSession(model: model, maxContext: 64)
            block.adapter = adapter
            let all = Array(try block.prefill(prompt))
            let steps = try InferenceSession(model: model, maxContext: 64)
            steps.adapter = adapter
            var last: [Float] = []
            for token in prompt { last = Array(try steps.step(token)) }
            #expect(all == last, "adapter \(adapter)")
        }
    }

    @Test("changing a session's adapter empties its cache")
    func adapterChangeEmptiesTheCache() throws {
        let model = try Self.model.get()
        let session = try InferenceSession(model: model, maxContext: 64)
        _ = try session.prefill(Self.prompts[0])
        session.adapter = nil  // unchanged: kept
        #expect(session.position == Self.prompts[0].count)
        session.adapter = 1
        #expect(session.position == 0)
        let fresh = try InferenceSession(model: model, maxContext: 64)
        fresh.adapter = 1
        #expect(Array(try session.prefill(Self.prompts[0])) == Array(try fresh.prefill(Self.prompts[0])))
    }
}

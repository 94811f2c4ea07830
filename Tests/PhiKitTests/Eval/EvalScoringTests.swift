import Foundation
import PhiEngine
import TestSupport
import Testing

@testable import PhiKit

/// The shortcuts of eval's scoring loop give the values the plain metric code gives: each
/// row's logsumexp computed on several threads, and a reference distribution loaded with it.
@Suite("eval's scoring shortcuts change no value")
struct EvalScoringTests {
    /// Two blocks of real logit rows (stories-260k, its first 9 and 7 tokens' logits), with
    /// the sessions that own them (the rows live in a session's buffer).
    static func blocks() throws -> (sessions: [InferenceSession], rows: [LogitRows]) {
        let container = try ModelContainer.load(TestPaths.storiesModel.path, environment: [:])
        let tokens = try container.tokenizer.encode("Once upon a time there was a little dog named Max.")
        let sessions = try [9, 7].map { _ in try container.makeSession(maxContext: 32, cacheWidth: .float32) }
        let rows = try zip(sessions, [9, 7]).map { try $0.verify(Array(tokens.prefix($1))) }
        return (sessions, rows)
    }

    @Test func logSumExpsOnThreadsAreEachRowsLogSumExp() throws {
        let (sessions, blocks) = try Self.blocks()
        defer { withExtendedLifetime(sessions) {} }
        for threads in [1, 2, 5] {
            let lse = EvalAccumulator.logSumExps(of: blocks, threads: threads)
            // the shorter block bounds the rows (every model's block has the same rows in eval)
            #expect(lse.map(\.count) == [7, 7])
            for (m, block) in blocks.enumerated() {
                for j in 0..<7 {
                    #expect(lse[m][j] == EvalAccumulator.logSumExp(block[j]), "threads \(threads)")
                }
            }
        }
    }

    @Test func referenceLoadedWithItsLogSumExpIsTheSame() throws {
        let (sessions, blocks) = try Self.blocks()
        defer { withExtendedLifetime(sessions) {} }
        let row = blocks[0][3]
        var plain = ReferenceDistribution()
        plain.load(row)
        var given = ReferenceDistribution()
        given.load(row, logSumExp: EvalAccumulator.logSumExp(row))
        #expect(given.probabilities == plain.probabilities)
        #expect(given.negativeEntropy == plain.negativeEntropy)
        #expect(given.best == plain.best && given.logits == plain.logits)
    }
}

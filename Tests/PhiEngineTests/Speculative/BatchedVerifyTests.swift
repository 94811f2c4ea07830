import Testing

@testable import PhiEngine

/// Speculative decoding inside continuous batching: a `DecodeBatch` step in which each
/// session brings its pending token and a draft (0…4 tokens, some wrong) gives every session
/// the rows its own `verify` gives, bit for bit, while sessions join and leave; so greedy
/// answers drafted in a batch are the plain answers. Both Phi shapes (the tiny Phi-3.5 crosses
/// its LongRoPE switch at 32 positions: that block is verified on its own), llama, phi and the
/// trained stories-260k; every KV cache width.
@Suite("batched verify")
struct BatchedVerifyTests {
    static let steps = 8

    /// One session's greedy speculative decoding, step by step: feed the pending token and a
    /// draft of the plain answer (corrupted at some places), keep the agreeing prefix and the
    /// model's own next token, rewind the rest.
    final class Drafting {
        let session: InferenceSession
        let plain: [Int]  // the plain greedy answer (and beyond what is generated)
        let index: Int
        var chosen: [Int]  // greedy tokens chosen so far, the last one pending
        var rows: [[Float]] = []  // every verify row, in order
        var drafted = 0
        var accepted = 0
        var stepCount = 0

        init(session: InferenceSession, plain: [Int], index: Int) {
            (self.session, self.plain, self.index) = (session, plain, index)
            chosen = [argmax(session.logits)]
        }

        /// The block to feed next: the pending token and a draft.
        func block() -> [Int] {
            let length = min((stepCount + index) % 5, plain.count - chosen.count)
            let draft = (0..<length).map { j -> Int in
                let token = plain[chosen.count + j]
                return (stepCount + j + index) % 4 == 3 ? (token + 1) % 300 + 3 : token
            }
            return [chosen.last!] + draft
        }

        /// Takes the rows after `block`.
        func accept(_ block: [Int], _ logits: LogitRows) {
            let draft = Array(block.dropFirst())
            var kept = 0
            for i in 0..<logits.count {
                rows.append(Array(logits[i]))
            }
            while kept < draft.count && argmax(logits[kept]) == draft[kept] { kept += 1 }
            chosen += draft[..<kept] + [argmax(logits[kept])]
            session.rewind(to: session.position - draft.count + kept)
            drafted += draft.count
            accepted += kept
            stepCount += 1
        }
    }

    static func prompts() -> [[Int]] {
        // 24 to 39 tokens: 8-bit keys calibrate at 32 (pk_attention.h), and the tiny
        // Phi-3.5 switches to LongRoPE's long factors after 32 positions
        (0..<4).map { k in (0..<(24 + 5 * k)).map { ($0 * 29 + k * 13) % 250 + 3 } }
    }

    @Test("drafts verified in a batch, sessions joining and leaving, equal each alone",
        arguments: KVCacheWidth.allCases)
    func batchEqualsAlone(_ width: KVCacheWidth) throws {
        for (label, model) in try SpeculativeIdentityTests.models() {
            let pool = try WorkerPool.shared()
            func session(_ prompt: [Int]) throws -> InferenceSession {
                let s = try InferenceSession(
                    model: model, maxContext: 96, pool: pool, block: 512, cacheWidth: width)
                _ = try s.prefill(prompt)
                return s
            }
            let prompts = Self.prompts()
            let plain = try prompts.map { try SessionReuseTests.decode(session($0), count: 40) }
            // alone: each session verifies its own blocks
            let alone = try prompts.enumerated().map { k, prompt in
                let d = Drafting(session: try session(prompt), plain: plain[k], index: k)
                for _ in 0..<Self.steps {
                    let block = d.block()
                    d.accept(block, try d.session.verify(block))
                }
                return d
            }
            // batched: session k joins at step k and leaves after its own `steps`
            let batch = try DecodeBatch(model: model, maxSequences: 4, maxTokens: 20, pool: pool)
            let together = try prompts.enumerated().map { k, prompt in
                Drafting(session: try session(prompt), plain: plain[k], index: k)
            }
            for turn in 0..<(Self.steps + 3) {
                let active = together.filter { $0.index <= turn && $0.stepCount < Self.steps }
                guard !active.isEmpty else { break }
                let blocks = active.map { $0.block() }
                let rows = try batch.verify(active.map(\.session), blocks: blocks)
                for (i, d) in active.enumerated() { d.accept(blocks[i], rows[i]) }
            }
            var accepted = 0
            for k in 0..<4 {
                let (a, b) = (alone[k], together[k])
                #expect(b.rows == a.rows, "\(label) \(width) session \(k): rows")
                #expect(b.chosen == a.chosen, "\(label) \(width) session \(k): tokens")
                #expect(
                    Array(b.chosen.dropLast()) == Array(plain[k].prefix(b.chosen.count - 1)),
                    "\(label) \(width) session \(k): the plain answer")
                #expect(b.session.tokens == a.session.tokens)
                accepted += b.accepted
                #expect(b.drafted > b.accepted)
            }
            #expect(accepted > 10, "\(label): \(accepted) drafted tokens kept")
        }
    }

    @Test("a block larger than the session's verify limit is refused before anything runs")
    func refusesOversizedBlock() throws {
        let model = try Phi3Model.load(directory: EngineGoldens.storiesModel)
        let pool = try WorkerPool.shared()
        let small = try InferenceSession(model: model, maxContext: 64, pool: pool, block: 4)
        let other = try InferenceSession(model: model, maxContext: 64, pool: pool, block: 512)
        _ = try small.prefill([1, 5, 9])
        _ = try other.prefill([1, 7])
        let batch = try DecodeBatch(model: model, maxSequences: 2, maxTokens: 16, pool: pool)
        #expect(throws: SessionError.self) {
            _ = try batch.verify([other, small], blocks: [[3, 4], [1, 2, 3, 4, 5]])
        }
        #expect(small.position == 3 && other.position == 2)
    }
}

import Foundation
import PhiEngine
import PhiKit
import TestSupport
import Testing

@testable import PhiServer

/// Speculative decoding inside the scheduler's continuous batching, on the bundled
/// stories-260k: slots that draft verify their drafts in the batched step with the others,
/// and every answer is byte for byte the one the request gets alone without drafts, while
/// requests join and leave the batch at different steps.
@Suite("scheduler: drafts verified in the batch")
struct SchedulerSpeculationTests {
    /// Runs `requests` on a scheduler of `parallel` slots, all submitted at once (those
    /// beyond the slots wait and join as others leave); the answers in order.
    static func serve(
        _ requests: [GenerationRequest], parallel: Int, speculation: Speculation,
        prefillChunk: Int = Scheduler.promptBlock
    ) throws -> [(String, GenerationSummary?)] {
        let container = try #require(SchedulerTests.container)
        let scheduler = Scheduler(
            container: container,
            configuration: .init(
                parallel: parallel, queueCapacity: 8, contextSize: 512, cacheBytes: 1 << 20,
                speculation: speculation, prefillChunk: prefillChunk))
        scheduler.start()
        defer { scheduler.shutdown() }
        let jobs = requests.map { GenerationJob($0) }
        for job in jobs { try scheduler.submit(job) }
        return jobs.map { GenerationHooksTests.answer($0) }
    }

    /// Proposes the plain answer's next tokens, every third drafted token wrong, 1…5 at a time.
    final class ScriptedDrafter: TokenDrafter, @unchecked Sendable {
        let answer: [Int]
        let promptLength: Int
        var calls = 0
        init(answer: [Int], promptLength: Int) { (self.answer, self.promptLength) = (answer, promptLength) }
        func draft(after tokens: [Int], limit: Int) -> [Int] {
            calls += 1
            let next = tokens.count - promptLength
            let length = min(limit, 1 + calls % 5, max(0, answer.count - next))
            return (0..<length).map { j in
                (calls + j) % 3 == 2 ? (answer[next + j] + 1) % 512 : answer[next + j]
            }
        }
        func observe(drafted: Int, accepted: Int) {}
    }

    static func prompts() throws -> [[Int]] {
        let container = try #require(SchedulerTests.container)
        let story = "Lily had a red ball. She played with the ball in the park every day. "
        return try [
            String(repeating: story, count: 3), "Once upon a time, there was a little dog",
            "Tom and Sue went to the beach. Tom and Sue", String(repeating: "The cat sat. ", count: 6),
            "One day a bird",
        ].map { try container.tokenizer.encode($0) }
    }

    @Test("drafting slots in a batch, joining and leaving, answer as each alone without drafts")
    func batchedDraftsAreExact() throws {
        let container = try #require(SchedulerTests.container)
        let prompts = try Self.prompts()
        let lengths = [60, 24, 45, 33, 50]  // slots leave at different steps
        func request(_ i: Int) throws -> GenerationRequest {
            try SchedulerTests.request(prompts[i], maxTokens: lengths[i])
        }
        let alone = try prompts.indices.map {
            try Self.serve([try request($0)], parallel: 1, speculation: .off)[0]
        }
        // the plain answers' tokens, for the scripted drafts
        let plain = try prompts.indices.map { i -> [Int] in
            let session = try InferenceSession(model: container.model, maxContext: 512)
            return try generate(
                session: session, prompt: prompts[i], parameters: .greedy(maxTokens: lengths[i]),
                stopTokens: try container.stopTokens()
            ) { _ in .more }.tokens
        }
        // scripted drafts, right and wrong, on 3 slots for 5 requests
        let scripted = try prompts.indices.map { i -> GenerationRequest in
            var r = try request(i)
            let (answer, count) = (plain[i], prompts[i].count)
            r.makeDrafter = { ScriptedDrafter(answer: answer, promptLength: count) }
            r.draftLength = 5
            return r
        }
        let batched = try Self.serve(scripted, parallel: 3, speculation: .off)
        var (drafted, kept) = (0, 0)
        for i in prompts.indices {
            #expect(batched[i].0 == alone[i].0, "request \(i)")
            let summary = try #require(batched[i].1)
            #expect(summary.completionTokens == alone[i].1?.completionTokens)
            #expect(summary.finishReason == alone[i].1?.finishReason)
            drafted += summary.draftedTokens
            kept += summary.acceptedDraftTokens
        }
        #expect(kept > 40 && drafted - kept > 10, "\(kept) of \(drafted) kept")
        // the server's own prompt lookup: the same answers
        let looked = try Self.serve(
            try prompts.indices.map(request), parallel: 3, speculation: .suggested)
        for i in prompts.indices { #expect(looked[i].0 == alone[i].0, "lookup, request \(i)") }
        // seeded sampling: the acceptance rule keeps each answer the one it is alone
        let sampled = prompts.indices.map { i -> GenerationRequest in
            var r = scripted[i]
            r.parameters = GenerationParameters(maxTokens: lengths[i], temperature: 0.8, seed: UInt64(7 + i))
            return r
        }
        let sampledAlone = try sampled.map { r -> String in
            var plainRequest = r
            plainRequest.makeDrafter = nil
            return try Self.serve([plainRequest], parallel: 1, speculation: .off)[0].0
        }
        let sampledBatch = try Self.serve(sampled, parallel: 3, speculation: .off)
        var sampledKept = 0
        for i in prompts.indices {
            #expect(sampledBatch[i].0 == sampledAlone[i], "sampled request \(i)")
            sampledKept += sampledBatch[i].1?.acceptedDraftTokens ?? 0
        }
        #expect(sampledKept > 0)
    }

    @Test("prompts fed in small chunks in the decoding slots' steps answer as each alone")
    func chunkedPromptsInTheBatchAreExact() throws {
        let prompts = try Self.prompts()
        let requests = try prompts.indices.map {
            try SchedulerTests.request(prompts[$0], maxTokens: 20 + 7 * $0)
        }
        let alone = try requests.map { try Self.serve([$0], parallel: 1, speculation: .off)[0] }
        // 7 prompt tokens a turn: each prompt in several chunks, the later ones held back
        // while an earlier one goes on, slots decoding beside the chunks as prompts finish
        for speculation in [Speculation.off, .suggested] {
            let batched = try Self.serve(
                requests, parallel: 3, speculation: speculation, prefillChunk: 7)
            for i in prompts.indices {
                #expect(batched[i].0 == alone[i].0, "request \(i), draft \(speculation.maxDraft)")
                #expect(batched[i].1?.completionTokens == alone[i].1?.completionTokens)
                #expect(batched[i].1?.promptTokens == prompts[i].count)
            }
        }
    }

    @Test("the batch cost model drafts where extra rows are cheap, not where each costs a step")
    func batchPricing() {
        // 4 slots: a step of 4 rows 100 ms; cheap rows 2 ms each beyond, or 25 ms each
        func context(perRow: Double) -> BatchDraftContext {
            let costs = BatchVerifyCost(maxRows: 40)
            for _ in 0..<3 {
                for rows in 4...12 { costs.record(rows: rows, seconds: 0.1 + perRow * Double(rows - 4)) }
            }
            return BatchDraftContext(costs: costs, otherRows: 3, otherTokens: 3)
        }
        let quote = Array(repeating: [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], count: 3).flatMap { $0 }
        let cheap = PromptLookupDrafter(maxDraft: 8)
        #expect(cheap.draft(after: quote, limit: 8, in: context(perRow: 0.002)).count >= 4)
        let dear = PromptLookupDrafter(maxDraft: 8)
        #expect(dear.draft(after: quote, limit: 8, in: context(perRow: 0.025)).isEmpty)
    }
}

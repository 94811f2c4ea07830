import Foundation
import PhiEngine
import PhiKit
import TestSupport
import Testing

@testable import PhiServer

/// The scheduler and the prompt cache on the bundled stories-260k, without HTTP.
@Suite("scheduler and prompt cache")
struct SchedulerTests {
    static let container: ModelContainer? = try? ModelContainer.load(TestPaths.storiesModel.path)

    static func request(_ prompt: [Int], maxTokens: Int = 50) throws -> GenerationRequest {
        let container = try #require(container)
        return GenerationRequest(
            prompt: prompt, parameters: .greedy(maxTokens: maxTokens),
            stopTokens: try container.stopTokens(), stopStrings: [], logprobs: nil)
    }

    /// Waits for the job's summary.
    static func summary(_ job: GenerationJob) -> GenerationSummary? {
        while true {
            for event in job.take() {
                switch event {
                case .text: continue
                case .finished(let summary): return summary
                case .failed: return nil
                }
            }
        }
    }

    @Test("a client seen gone ends its answer before the next token")
    func clientGoneWithinOneToken() throws {
        let container = try #require(Self.container)
        let scheduler = Scheduler(
            container: container,
            configuration: .init(parallel: 2, queueCapacity: 4, contextSize: 512, cacheBytes: 1 << 20))
        scheduler.start()
        defer { scheduler.shutdown() }
        final class Polls: @unchecked Sendable {
            let lock = NSLock()
            var count = 0
            func next() -> Int { lock.withLock { count += 1; return count } }
        }
        let polls = Polls()
        // The scheduler asks before every step: the 6th time, the client is gone.
        let job = GenerationJob(try Self.request([1], maxTokens: 200)) { polls.next() > 5 }
        try scheduler.submit(job)
        let summary = try #require(Self.summary(job))
        #expect(summary.finishReason == .cancelled)
        #expect(summary.completionTokens == 5)
        // The slot is free again: a new request is answered in full.
        let next = GenerationJob(try Self.request([1], maxTokens: 20))
        try scheduler.submit(next)
        #expect(Self.summary(next)?.completionTokens == 20)
    }

    @Test("the cache picks the longest common prefix and evicts the least recently used")
    func promptCacheChoiceAndEviction() throws {
        let container = try #require(Self.container)
        let bytesPerToken = 1000
        var cache = PromptCache(bytesPerToken: bytesPerToken, budgetBytes: 25_000, maxEntries: 3)
        func entry(_ tokens: [Int], used: UInt64) throws -> CachedSession {
            let session = try InferenceSession(model: container.model, maxContext: 64)
            try session.prepare(tokens)
            let entry = CachedSession(session)
            entry.noteUse(used)
            return entry
        }
        var evicted = [
            cache.insert(try entry([1, 403, 407, 261], used: 1)),
            cache.insert(try entry([1, 403, 500], used: 2)),
            cache.insert(try entry([1, 9, 9, 9, 9, 9, 9, 9, 9, 9], used: 3)),
        ]
        #expect(evicted == [0, 0, 0] && cache.residentBytes == 17_000)
        // 10 more tokens go over 25 000 bytes: the oldest (used 1) goes.
        evicted = [cache.insert(try entry(Array(repeating: 5, count: 10), used: 4))]
        #expect(evicted == [1])
        #expect(cache.entries.map(\.lastUsed).sorted() == [2, 3, 4])
        let best = cache.takeBest(for: [1, 403, 500, 7, 8], adapter: nil)
        #expect(best?.reusable == 3 && best?.entry.lastUsed == 2)
        let none = cache.takeBest(for: [2, 3], adapter: nil)
        #expect(none == nil)
        // Never the prompt's last token: its logits pick the first new one.
        let whole = cache.takeBest(for: Array(repeating: 5, count: 10), adapter: nil)
        #expect(whole?.reusable == 9)
    }
}

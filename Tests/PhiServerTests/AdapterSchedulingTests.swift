import Foundation
import PhiEngine
import PhiKit
import TestSupport
import Testing

@testable import PhiServer

/// `serve --adapter NAME=DIR`: requests with different run-time adapters (and none) generate
/// together in the scheduler's batch, each answer what it is alone and what the fused model
/// answers; a prompt cached under one adapter is never reused under another, in memory or on
/// disk. On stories-260k with two rank-4 LoRAs on every layer's qkv_proj.
@Suite("serve: run-time adapters per request")
struct AdapterSchedulingTests {
    struct Fixture: Sendable {
        let work: URL
        let container: ModelContainer
        /// The fused models' containers, by adapter index.
        let fused: [ModelContainer]
    }

    static let fixture: Result<Fixture, any Error> = Result {
        // the test process's own TMPDIR (TestIsolation)
        let work = FileManager.default.temporaryDirectory.appendingPathComponent(
            "serve-adapters-\(UUID().uuidString)")
        let base = TestPaths.storiesModel.path
        var named: [NamedAdapter] = []
        var fused: [ModelContainer] = []
        for (name, seed) in [("sql", UInt64(3)), ("poet", UInt64(5))] {
            let dir = work.appendingPathComponent(name)
            try TestAdapters.write(to: dir, layers: 0..<5, rank: 4, seed: seed)
            named.append(NamedAdapter(name: name, directory: dir.path))
            let output = work.appendingPathComponent(name + "-fused").path
            var options = FuseOptions(
                model: base, adapterPath: dir.path, output: output, environment: [:])
            options.threads = 1
            _ = try fuse(options)
            fused.append(try ModelContainer.load(output))
        }
        return Fixture(
            work: work, container: try ModelContainer.load(base, adapters: named), fused: fused)
    }

    static func request(
        _ container: ModelContainer, adapter: Int?, prompt: [Int] = [1, 403, 407], maxTokens: Int = 40
    ) throws -> GenerationRequest {
        var request = GenerationRequest(
            prompt: prompt, parameters: .greedy(maxTokens: maxTokens),
            stopTokens: try container.stopTokens(), stopStrings: [], logprobs: nil)
        request.adapter = adapter
        return request
    }

    /// The answer's text and summary; a failed job is an error.
    static func answer(_ job: GenerationJob) throws -> (text: String, summary: GenerationSummary) {
        let answer = GenerationHooksTests.answer(job)
        return (answer.text, try #require(answer.summary, "the job failed"))
    }

    static func scheduler(
        _ container: ModelContainer, parallel: Int = 3, disk: [Int: DiskPrefixCache] = [:],
        base: DiskPrefixCache? = nil
    ) -> Scheduler {
        Scheduler(
            container: container,
            configuration: .init(
                parallel: parallel, queueCapacity: 4, contextSize: 256, cacheBytes: 1 << 20,
                speculation: .off, diskCache: base, adapterDiskCaches: disk))
    }

    /// Each request alone, on a scheduler of its own.
    static func alone(_ container: ModelContainer, _ request: GenerationRequest) throws -> String {
        let scheduler = scheduler(container, parallel: 1)
        scheduler.start()
        defer { scheduler.shutdown() }
        let job = GenerationJob(request)
        try scheduler.submit(job)
        return try answer(job).text
    }

    @Test("three requests, adapter A, adapter B and none, batched: each as alone and as fused")
    func batchedAnswersEqualAloneAndFused() throws {
        let f = try Self.fixture.get()
        let adapters: [Int?] = [0, 1, nil]
        let requests = try adapters.map { try Self.request(f.container, adapter: $0) }
        let scheduler = Self.scheduler(f.container)
        // queued before the thread starts: admitted in one turn, prefilled together, then
        // every decode step is one forward pass of the three
        let jobs = requests.map { GenerationJob($0) }
        for job in jobs { try scheduler.submit(job) }
        scheduler.start()
        let batched = try jobs.map { try Self.answer($0).text }
        scheduler.shutdown()
        let alone = try requests.map { try Self.alone(f.container, $0) }
        #expect(batched == alone)
        #expect(Set(batched).count == 3, "the adapters change the story: \(batched)")
        for k in 0..<2 {
            let fused = try Self.alone(f.fused[k], try Self.request(f.fused[k], adapter: nil))
            #expect(batched[k] == fused, "adapter \(k)")
        }
    }

    @Test("a prompt cached under one adapter is reused only under that adapter, in memory and on disk")
    func prefixCacheIsPerAdapter() throws {
        let f = try Self.fixture.get()
        let prompt = [1, 403, 407, 261, 30, 9, 33, 120, 7, 88]
        let cacheDir = f.work.appendingPathComponent("kv-\(UUID().uuidString)").path
        func disk(_ adapter: String?) throws -> DiskPrefixCache {
            try DiskPrefixCache(
                directory: cacheDir, limitBytes: 1 << 24,
                fingerprint: ModelFingerprint(
                    directory: f.container.model.directory,
                    modelType: f.container.model.config.modelType, cacheWidth: .defaultForRun,
                    adapterDirectory: adapter),
                minTokens: 1, warn: { Issue.record("disk cache: \($0)") })
        }
        func run(_ scheduler: Scheduler, _ adapter: Int?) throws -> (text: String, cached: Int) {
            let job = GenerationJob(try Self.request(f.container, adapter: adapter, prompt: prompt, maxTokens: 12))
            try scheduler.submit(job)
            let answer = try Self.answer(job)
            return (answer.text, answer.summary.cachedTokens)
        }
        let expected = try [0, 1, nil].map {
            try Self.alone(f.container, Self.request(f.container, adapter: $0, prompt: prompt, maxTokens: 12))
        }
        // memory: the session that computed the prompt under adapter 0 serves only adapter 0
        // (it holds the whole prompt: without the adapter in the key, each request below
        // would reuse it)
        var scheduler = Self.scheduler(f.container, parallel: 2)
        scheduler.start()
        let first = try run(scheduler, 0)
        let other = try run(scheduler, 1)
        let none = try run(scheduler, nil)
        let again = try run(scheduler, 0)
        scheduler.shutdown()
        #expect(first.cached == 0 && other.cached == 0 && none.cached == 0)
        #expect(again.cached == prompt.count - 1)
        #expect([first.text, other.text, none.text] == expected && again.text == expected[0])
        // disk: one process stores the prompt under each adapter (the writes are finished when
        // it shuts down) …
        func diskScheduler() throws -> Scheduler {
            Self.scheduler(
                f.container, parallel: 1,
                disk: [
                    0: try disk(f.container.adapters[0].directory),
                    1: try disk(f.container.adapters[1].directory),
                ], base: try disk(nil))
        }
        scheduler = try diskScheduler()
        scheduler.start()
        for adapter in [0, 1, nil] as [Int?] { _ = try run(scheduler, adapter) }
        scheduler.shutdown()
        // … and a new process restores each adapter's own
        for (adapter, index) in [(1, 1), (nil, 2), (0, 0)] as [(Int?, Int)] {
            scheduler = try diskScheduler()
            scheduler.start()
            let restored = try run(scheduler, adapter)
            scheduler.shutdown()
            #expect(restored.cached == prompt.count - 1 && restored.text == expected[index])
        }
        // a prompt stored under adapter 0 alone is not found by the others
        let onlyA = [1, 9, 9, 9, 9, 9]
        scheduler = Self.scheduler(f.container, parallel: 1, disk: [0: try disk(f.container.adapters[0].directory)])
        scheduler.start()
        let job = GenerationJob(try Self.request(f.container, adapter: 0, prompt: onlyA, maxTokens: 2))
        try scheduler.submit(job)
        _ = try Self.answer(job)
        scheduler.shutdown()
        #expect(try disk(f.container.adapters[0].directory).contains(onlyA))
        #expect(try !disk(f.container.adapters[1].directory).contains(onlyA) && !disk(nil).contains(onlyA))
    }
}

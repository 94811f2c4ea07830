import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// Runs every generation on one thread: up to `parallel` requests at a time, each in its own
/// slot (session, sampler), more waiting in a bounded queue. Each turn is one forward pass
/// (`DecodeBatch`: the weights are read once for all its rows): every decoding slot's pending
/// token and the draft it chose to verify (speculative decoding inside the batch, priced by
/// what the batch's steps measure, `BatchVerifyCost`), with a chunk of the earliest new
/// prompt — and admits waiting requests, so a new request joins between steps (continuous
/// batching) and a prompt being computed does not stop the answers already streaming. Batched or not, drafting or not, each session computes bit
/// for bit what it would alone, so a greedy answer equals `phikit run`'s. Requests with
/// different run-time adapters (`GenerationRequest.adapter`) share the batch: the base
/// product once, each row its own adapter's correction; the prompt caches key the adapter.
public final class Scheduler: @unchecked Sendable {
    public struct Configuration: Sendable {
        /// Requests generating at once.
        public var parallel: Int
        /// Requests waiting for a slot; one more is refused (503).
        public var queueCapacity: Int
        /// Positions each session's KV cache holds (prompt and answer).
        public var contextSize: Int
        /// Memory the prompt cache may keep in finished sessions' KV caches.
        public var cacheBytes: Int
        /// Width of the cached keys and values (`--kv-bits`).
        public var cacheWidth: KVCacheWidth
        /// Speculative decoding for requests that bring no drafter of their own.
        public var speculation: Speculation
        /// Prompts' KV caches on disk (`--cache-dir`): looked up when memory has no longer
        /// prefix, written once a prompt (of at least its `minTokens`) is computed. This one
        /// for the requests with the container's default adapter (or none)…
        public var diskCache: DiskPrefixCache?
        /// …and one for each adapter requests select, by index (each under a fingerprint of
        /// its own: the same tokens have other keys and values under another adapter); empty:
        /// those requests use none.
        public var adapterDiskCaches: [Int: DiskPrefixCache]
        /// Prompt tokens a turn feeds (at least 1; tests make it small to cut prompts into
        /// many chunks).
        public var prefillChunk: Int
        /// A line per turn (PHIKIT_SCHEDULER_TRACE): where the time goes, for benchmarks.
        public var turnLog: TurnLog?

        public init(
            parallel: Int, queueCapacity: Int, contextSize: Int, cacheBytes: Int,
            cacheWidth: KVCacheWidth = .defaultForRun, speculation: Speculation = .serveDefault,
            diskCache: DiskPrefixCache? = nil, adapterDiskCaches: [Int: DiskPrefixCache] = [:],
            prefillChunk: Int = Scheduler.promptBlock, turnLog: TurnLog? = nil
        ) {
            self.parallel = parallel
            self.queueCapacity = queueCapacity
            self.contextSize = contextSize
            self.cacheBytes = cacheBytes
            self.cacheWidth = cacheWidth
            self.speculation = speculation
            self.diskCache = diskCache
            self.adapterDiskCaches = adapterDiskCaches
            self.prefillChunk = max(1, prefillChunk)
            self.turnLog = turnLog
        }

        /// Every disk cache, for /metrics and to finish their writes.
        public var allDiskCaches: [DiskPrefixCache] {
            (diskCache.map { [$0] } ?? []) + adapterDiskCaches.sorted { $0.key < $1.key }.map(\.value)
        }
    }

    /// A session's prefill block (the most one `verify` takes): the prompt tokens a turn
    /// feeds unless configured otherwise.
    public static let promptBlock = 512

    let container: ModelContainer
    let configuration: Configuration
    private let condition = NSCondition()
    private var waiting: [GenerationJob] = []
    private var activeCount = 0
    /// Positions held in the active slots' KV caches, and bytes the prompt cache keeps, as
    /// of the last turn (for /metrics).
    private var kvTokens = 0
    private var cachedBytes = 0
    private var stopping = false
    private var finished = false
    /// Only the scheduler thread touches these.
    private var active: [Slot] = []
    private var cache: PromptCache
    private var sessionCount = 0
    /// Requests admitted so far (each slot's place in that order).
    private var admissions = 0
    private var clock: UInt64 = 0
    private var batch: DecodeBatch?
    /// What the batched steps cost by their rows, for the slots' drafters.
    private let stepCosts: BatchVerifyCost
    /// The turn being measured for `configuration.turnLog`, and when (and at what process
    /// CPU time) the last one ended.
    private var measured = TurnLog.Turn()
    private var lastTurnEnd = (wall: monotonicSeconds(), cpu: 0.0)

    public init(container: ModelContainer, configuration: Configuration) {
        self.container = container
        self.configuration = configuration
        let config = container.model.config
        cache = PromptCache(
            bytesPerToken: 2 * config.layerCount * config.kvHeads
                * configuration.cacheWidth.bytesPerRow(headDim: config.headDim),
            budgetBytes: configuration.cacheBytes, maxEntries: 2 * configuration.parallel)
        stepCosts = BatchVerifyCost(maxRows: Self.batchTokens(configuration))
    }

    /// Tokens one batched decode step takes: each slot's token and a full draft at the
    /// server's length (at least `suggested`'s, for requests that bring a drafter), within
    /// one prompt block.
    static func batchTokens(_ configuration: Configuration) -> Int {
        let draft = max(configuration.speculation.maxDraft, Speculation.suggested.maxDraft)
        return min(configuration.parallel * (1 + draft), max(promptBlock, configuration.parallel))
    }

    /// Tokens one forward pass of a turn takes: a decode step's and a chunk of prompt
    /// tokens. Blocks beyond it (a constraint's long forced run) go into a second pass.
    static func passTokens(_ configuration: Configuration) -> Int {
        batchTokens(configuration) + configuration.prefillChunk
    }

    /// Starts the scheduler thread.
    public func start() {
        let thread = Thread { [self] in loop() }
        thread.name = "phikit-scheduler"
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Queues `job`; its events arrive through the job.
    func submit(_ job: GenerationJob) throws(SchedulerRefusal) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { throw .stopping }
        // A free slot takes the job at the next turn; only what exceeds the slots waits.
        let waitingAfter = activeCount + waiting.count + 1 - configuration.parallel
        guard waitingAfter <= configuration.queueCapacity else {
            throw .queueFull(waiting: waiting.count, active: activeCount)
        }
        waiting.append(job)
        condition.signal()
    }

    /// Refuses new requests, ends the waiting ones and cuts the generating ones at their
    /// next step (their answers end with what was sent); returns when the thread is done.
    public func shutdown() {
        condition.lock()
        stopping = true
        let dropped = waiting
        waiting.removeAll()
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
        for job in dropped { job.post(.failed(SchedulerRefusal.stopping)) }
        for disk in configuration.allDiskCaches {
            disk.waitForWrites()  // a prefix being written is finished, not cut
        }
    }

    /// The KV caches' use as of the last turn, for /metrics: positions held by the
    /// generating slots, and bytes kept by the prompt cache.
    var cacheUse: (slotTokens: Int, promptCacheBytes: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (kvTokens, cachedBytes)
    }

    /// Requests generating and waiting, for /health.
    public var load: (active: Int, waiting: Int) {
        condition.lock()
        defer { condition.unlock() }
        return (activeCount, waiting.count)
    }

    private func loop() {
        while true {
            condition.lock()
            while active.isEmpty && waiting.isEmpty && !stopping { condition.wait() }
            if stopping {
                finished = active.isEmpty
                if finished {
                    condition.broadcast()
                    condition.unlock()
                    return
                }
            }
            var admitted: [GenerationJob] = []
            while !stopping, active.count + admitted.count < configuration.parallel,
                !waiting.isEmpty
            {
                admitted.append(waiting.removeFirst())
            }
            activeCount = active.count + admitted.count
            let cut = stopping
            condition.unlock()
            if cut {
                for slot in active { end(slot, .length) }
                active.removeAll()
                continue
            }
            let admitStart = monotonicSeconds()
            for job in admitted { admit(job) }
            if configuration.turnLog != nil {
                let now = monotonicSeconds()
                measured = TurnLog.Turn(gap: admitStart - lastTurnEnd.wall, admit: now - admitStart)
            }
            turn()
            if let log = configuration.turnLog {
                let now = monotonicSeconds()
                let cpu = TurnLog.processCPUSeconds()
                measured.cpu = cpu - lastTurnEnd.cpu
                log.record(measured, endedAt: now)
                lastTurnEnd = (now, cpu)
            }
        }
    }

    /// The disk cache of the requests with `adapter`.
    private func diskCache(for adapter: Int?) -> DiskPrefixCache? {
        adapter == container.defaultAdapter
            ? configuration.diskCache : adapter.flatMap { configuration.adapterDiskCaches[$0] }
    }

    /// Gives `job` a session: the cached one of its adapter sharing the longest prefix with
    /// its prompt, else a fresh one while there is room, else the least recently used (which
    /// is emptied if it was of another adapter).
    private func admit(_ job: GenerationJob) {
        job.markAdmitted()
        let prompt = job.request.prompt
        let adapter = job.request.adapter
        do {
            let entry: CachedSession
            var reusable = 0
            if let best = cache.takeBest(for: prompt, adapter: adapter) {
                (entry, reusable) = best
            } else if sessionCount >= configuration.parallel + cache.maxEntries,
                let oldest = cache.takeOldest()
            {
                entry = oldest
            } else {
                entry = CachedSession(
                    try InferenceSession(
                        model: container.model, maxContext: configuration.contextSize,
                        cacheWidth: configuration.cacheWidth,
                        activationWidth: container.activationWidth))
                sessionCount += 1
            }
            entry.session.adapter = adapter
            admissions += 1
            if let disk = diskCache(for: adapter) {
                reusable = disk.restoreLongestPrefix(of: prompt, into: entry.session)
            }
            active.append(
                Slot(
                    job: job, admission: admissions, entry: entry, expectedReuse: reusable,
                    tokenizer: container.tokenizer, speculation: configuration.speculation))
        } catch {
            job.post(.failed(SchedulerFailure(error)))
        }
    }

    /// One step of every active slot, in one forward pass: slots whose client left are ended
    /// first; each decoding slot feeds its pending tokens and the draft it chose, and the
    /// earliest admitted of the prefilling slots its prompt's next chunk (`prefillChunk`
    /// tokens). The answers already streaming advance while a prompt is computed, and
    /// prompts arriving together are computed first come, first served: each request's first
    /// token comes as soon as its own prompt is in (one pass of several prompts would read
    /// the weights once, but measured it saves ~5% of their CPU time while every request
    /// waits for the last prompt).
    private func turn() {
        var decoding: [Slot] = []
        var prefilling: [Slot] = []
        for slot in active {
            if slot.job.isAbandoned {
                end(slot, .cancelled)
            } else if slot.isPrefilling {
                prefilling.append(slot)
            } else {
                decoding.append(slot)
            }
        }
        active = []
        step(decoding: decoding, prefilling: prefilling)
        let held = active.reduce(0) { $0 + $1.session.position }
        condition.lock()
        activeCount = active.count
        kvTokens = held
        cachedBytes = cache.residentBytes
        condition.unlock()
    }

    /// What one slot feeds in a step: its decode block, or a chunk of its prompt.
    private struct Feed {
        let slot: Slot
        let tokens: [Int]
        let isPrompt: Bool
    }

    /// Drafts for each decoding slot (priced in this step: what the others bring), takes the
    /// prompt chunk, feeds every block in one forward pass (more when the blocks exceed the
    /// batch), and takes each slot's next tokens; the time of a step without prompt tokens
    /// goes to the cost model.
    private func step(decoding: [Slot], prefilling: [Slot]) {
        let planStart = monotonicSeconds()
        var feeds: [Feed] = []
        var rows = decoding.reduce(0) { $0 + $1.pending.count }
        for slot in decoding {
            let context = BatchDraftContext(
                costs: stepCosts, otherRows: rows - slot.pending.count,
                otherTokens: Double(decoding.count - 1))
            do {
                try slot.planDraft(in: context)
                rows += slot.block.count - slot.pending.count
                feeds.append(Feed(slot: slot, tokens: slot.block, isPrompt: false))
            } catch {
                fail(slot, error)
            }
        }
        if let first = prefilling.min(by: { $0.admission < $1.admission }) {
            for slot in prefilling where slot !== first {
                active.append(slot)  // its prompt comes once the earlier ones are in
            }
            do {
                let chunk = try first.nextPromptChunk(limit: configuration.prefillChunk)
                feeds.append(Feed(slot: first, tokens: chunk, isPrompt: true))
            } catch {
                fail(first, error)
            }
        }
        let start = monotonicSeconds()
        let tracing = configuration.turnLog != nil
        if tracing {
            measured.draftTokens = feeds.reduce(0) { $0 + ($1.isPrompt ? 0 : $1.slot.draft.count) }
        }
        var groups: [[Feed]] = [[]]
        var groupTokens = 0
        for feed in feeds {
            if groupTokens + feed.tokens.count > Self.passTokens(configuration), !groups[0].isEmpty {
                groups.append([])
                groupTokens = 0
            }
            groups[groups.count - 1].append(feed)
            groupTokens += feed.tokens.count
        }
        var passSeconds = 0.0
        for group in groups where !group.isEmpty {
            do {
                let passStart = monotonicSeconds()
                let cpuStart = tracing ? TurnLog.processCPUSeconds() : 0
                let logits = try forward(group)
                passSeconds += monotonicSeconds() - passStart
                if tracing { measured.passCPU += TurnLog.processCPUSeconds() - cpuStart }
                for (feed, rows) in zip(group, logits) {
                    advance(feed.slot) {
                        feed.isPrompt ? try accept(prompt: feed, rows: rows) : try feed.slot.accept(rows: rows)
                    }
                }
            } catch {
                for feed in group { fail(feed.slot, error) }
            }
        }
        if groups.count == 1, !decoding.isEmpty, !feeds.contains(where: \.isPrompt) {
            stepCosts.record(rows: rows, seconds: monotonicSeconds() - start)
        }
        if tracing {
            measured.decodingSlots = decoding.count
            measured.decodeRows = rows
            measured.promptTokens = feeds.reduce(0) { $0 + ($1.isPrompt ? $1.tokens.count : 0) }
            measured.plan = start - planStart
            measured.pass = passSeconds
            measured.accept = monotonicSeconds() - start - passSeconds
        }
    }

    /// Notes a fed chunk of `feed.slot`'s prompt; once the whole prompt is in, stores it in
    /// the disk cache and takes the first token from its last row.
    private func accept(prompt feed: Feed, rows: LogitRows) throws -> FinishReason? {
        let slot = feed.slot
        slot.fedPrompt(feed.tokens.count)
        guard !slot.isPrefilling else { return nil }
        diskCache(for: slot.session.adapter)?.storeInBackground(
            prompt: slot.job.request.prompt, from: slot.session, reused: slot.cachedTokens)
        return try slot.accept(rows[rows.count - 1])
    }

    /// Feeds each slot's tokens: one forward pass for all (a lone slot alone, its prompt
    /// chunk with the logits of its last token only).
    private func forward(_ feeds: [Feed]) throws -> [LogitRows] {
        if feeds.count == 1 {
            let feed = feeds[0]
            return [try feed.slot.session.verify(feed.tokens, lastRows: feed.isPrompt ? 1 : nil)]
        }
        if batch == nil {
            batch = try DecodeBatch(
                model: container.model, maxSequences: configuration.parallel,
                maxTokens: Self.passTokens(configuration))
        }
        return try batch!.verify(feeds.map(\.slot.session), blocks: feeds.map(\.tokens))
    }

    /// Runs one step of `slot`; ends it (finished or failed) or keeps it active.
    private func advance(_ slot: Slot, _ step: () throws -> FinishReason?) {
        do {
            if let reason = try step() {
                end(slot, reason)
            } else {
                active.append(slot)
            }
        } catch {
            fail(slot, error)
        }
    }

    private func fail(_ slot: Slot, _ error: any Error) {
        slot.job.post(.failed(SchedulerFailure(error)))
        release(slot)
    }

    private func end(_ slot: Slot, _ reason: FinishReason) {
        slot.finish(reason)
        release(slot)
    }

    /// The slot's session goes to the prompt cache (which may evict older ones).
    private func release(_ slot: Slot) {
        clock += 1
        slot.entry.noteUse(clock)
        sessionCount -= cache.insert(slot.entry)
    }
}

/// Why a request was not queued.
enum SchedulerRefusal: Error, Sendable, Equatable {
    case queueFull(waiting: Int, active: Int)
    case stopping
}

/// An engine error during generation, carried to the connection as it is.
struct SchedulerFailure: Error, @unchecked Sendable {
    let error: any Error
    init(_ error: any Error) { self.error = error }
}

import Synchronization

/// What the server counts for `GET /metrics`: every finished request's tokens and timing
/// (from all three APIs: they share one path into the scheduler) and the requests refused
/// because the queue was full.
final class ServerMetrics: Sendable {
    struct Totals: Sendable {
        /// Prompt tokens computed (the cached ones are not).
        var promptTokens = 0
        var promptSeconds = 0.0
        var generatedTokens = 0
        var generationSeconds = 0.0
        /// Requests whose prompt reused cached tokens, and how many tokens that saved.
        var cacheHits = 0
        var cachedTokens = 0
        var finished: [FinishReason: Int] = [:]
        var refused = 0
    }

    private let totals = Mutex(Totals())

    var snapshot: Totals { totals.withLock { $0 } }

    /// A finished job: the prompt counts from admission to its first text, generation from
    /// then to the end (what llama-server calls prompt and predicted time).
    func record(_ summary: GenerationSummary, _ timing: JobTiming) {
        let prompt = timing.admitted.flatMap { start in timing.firstText.map { start.duration(to: $0) } }
        let generation = timing.firstText.flatMap { start in timing.finished.map { start.duration(to: $0) } }
        totals.withLock { t in
            t.promptTokens += summary.promptTokens - summary.cachedTokens
            t.promptSeconds += prompt.map(Self.seconds) ?? 0
            t.generatedTokens += summary.completionTokens
            t.generationSeconds += generation.map(Self.seconds) ?? 0
            if summary.cachedTokens > 0 {
                t.cacheHits += 1
                t.cachedTokens += summary.cachedTokens
            }
            t.finished[summary.finishReason, default: 0] += 1
        }
    }

    func recordRefusal() { totals.withLock { $0.refused += 1 } }

    private static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}

/// `GET /metrics` in Prometheus' text format (0.0.4). llama-server's names where it has the
/// same measure (`llamacpp:prompt_tokens_total`, `llamacpp:requests_processing`, …), so
/// dashboards written for it work; `phikit_` for what only phikit has (the prompt cache).
struct MetricsPage {
    let metrics: ServerMetrics.Totals
    let load: (active: Int, waiting: Int)
    let cacheUse: (slotTokens: Int, promptCacheBytes: Int)
    let slots: Int
    let contextSize: Int
    /// The prefix cache on disk (`--cache-dir`), when the server has one.
    var diskCache: (hits: Int, tokens: Int, bytes: Int)? = nil

    var text: String {
        let m = metrics
        var out = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(String, Double)]) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n"
            for (labels, value) in samples { out += "\(name)\(labels) \(Self.number(value))\n" }
        }
        func one(_ name: String, _ type: String, _ help: String, _ value: Double) {
            family(name, type, help, [("", value)])
        }
        one("llamacpp:prompt_tokens_total", "counter", "Number of prompt tokens processed.",
            Double(m.promptTokens))
        one("llamacpp:prompt_seconds_total", "counter", "Prompt process time", m.promptSeconds)
        one("llamacpp:tokens_predicted_total", "counter", "Number of generation tokens processed.",
            Double(m.generatedTokens))
        one("llamacpp:tokens_predicted_seconds_total", "counter", "Predict process time",
            m.generationSeconds)
        one("llamacpp:prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s.",
            m.promptSeconds > 0 ? Double(m.promptTokens) / m.promptSeconds : 0)
        one("llamacpp:predicted_tokens_seconds", "gauge",
            "Average generation throughput in tokens/s.",
            m.generationSeconds > 0 ? Double(m.generatedTokens) / m.generationSeconds : 0)
        one("llamacpp:kv_cache_usage_ratio", "gauge",
            "KV-cache usage of the generating slots. 1 means 100 percent usage.",
            Double(cacheUse.slotTokens) / Double(max(1, slots * contextSize)))
        one("llamacpp:kv_cache_tokens", "gauge", "KV-cache tokens held by the generating slots.",
            Double(cacheUse.slotTokens))
        one("llamacpp:requests_processing", "gauge", "Number of requests processing.",
            Double(load.active))
        one("llamacpp:requests_deferred", "gauge", "Number of requests deferred.",
            Double(load.waiting))
        one("phikit_slots", "gauge", "Requests that can generate at once (--parallel).",
            Double(slots))
        one("phikit_prompt_cache_hits_total", "counter",
            "Requests whose prompt reused tokens cached by an earlier request.",
            Double(m.cacheHits))
        one("phikit_prompt_cache_tokens_total", "counter",
            "Prompt tokens taken from the prompt cache instead of computed.",
            Double(m.cachedTokens))
        one("phikit_prompt_cache_bytes", "gauge",
            "Memory the prompt cache keeps in finished requests' KV caches.",
            Double(cacheUse.promptCacheBytes))
        if let disk = diskCache {
            one("phikit_disk_cache_hits_total", "counter",
                "Prompts that restored a prefix from the prompt cache on disk (--cache-dir).",
                Double(disk.hits))
            one("phikit_disk_cache_tokens_total", "counter",
                "Prompt tokens restored from the prompt cache on disk instead of computed.",
                Double(disk.tokens))
            one("phikit_disk_cache_bytes", "gauge",
                "Bytes the prompt cache on disk holds for this model (at most --cache-size).",
                Double(disk.bytes))
        }
        family("phikit_requests_finished_total", "counter", "Requests finished, by finish reason.",
            [FinishReason.stop, .length, .cancelled].map {
                ("{reason=\"\($0.rawValue)\"}", Double(m.finished[$0] ?? 0))
            })
        one("phikit_requests_refused_total", "counter",
            "Requests refused with 503 because the queue was full (--max-queue).",
            Double(m.refused))
        return out
    }

    /// Integers without a fraction, others as Swift prints a Double (Prometheus parses both).
    private static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
    }
}

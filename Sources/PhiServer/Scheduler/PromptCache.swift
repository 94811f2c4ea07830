import PhiEngine

/// A session (KV cache) and what it holds: kept after its request ends so that a request
/// whose prompt extends the same conversation skips recomputing the shared prefix.
final class CachedSession {
    let session: InferenceSession
    /// The most positions it ever held: its KV pages stay resident after a reset, so this is
    /// what it costs in memory.
    private(set) var highWater = 0
    var lastUsed: UInt64 = 0

    init(_ session: InferenceSession) { self.session = session }

    func noteUse(_ clock: UInt64) {
        highWater = max(highWater, session.position)
        lastUsed = clock
    }
}

/// The sessions of finished requests, least recently used evicted first, bounded by the
/// memory their KV caches hold and by a count. A new request takes the one sharing the
/// longest token prefix with its prompt (llama.cpp's slot similarity, mlx_lm's prompt cache).
struct PromptCache {
    /// Resident KV bytes per position: keys and values, float32, every layer.
    let bytesPerToken: Int
    let budgetBytes: Int
    let maxEntries: Int
    private(set) var entries: [CachedSession] = []

    init(bytesPerToken: Int, budgetBytes: Int, maxEntries: Int) {
        self.bytesPerToken = bytesPerToken
        self.budgetBytes = budgetBytes
        self.maxEntries = maxEntries
    }

    var residentBytes: Int { entries.reduce(0) { $0 + $1.highWater * bytesPerToken } }

    /// The entry of `adapter` that shares the longest prefix with `prompt` (removed from the
    /// cache), and how many of the prompt's tokens it can keep; nil when none shares any.
    /// A session computed with another adapter (or none) holds other keys and values for
    /// the same tokens, so it never counts.
    mutating func takeBest(for prompt: [Int], adapter: Int?) -> (entry: CachedSession, reusable: Int)? {
        var best: (index: Int, reusable: Int)?
        for (i, entry) in entries.enumerated() where entry.session.adapter == adapter {
            let reusable = entry.session.reusableLength(of: prompt)
            if reusable > (best?.reusable ?? 0) { best = (i, reusable) }
        }
        guard let best else { return nil }
        return (entries.remove(at: best.index), best.reusable)
    }

    /// The least recently used entry, to be reset and reused (removed from the cache).
    mutating func takeOldest() -> CachedSession? {
        guard let i = entries.indices.min(by: { entries[$0].lastUsed < entries[$1].lastUsed })
        else { return nil }
        return entries.remove(at: i)
    }

    /// Keeps `entry`, then evicts least recently used entries beyond the bounds (their
    /// memory is given back when the session is released); returns how many it evicted.
    @discardableResult
    mutating func insert(_ entry: CachedSession) -> Int {
        entries.append(entry)
        var evicted = 0
        while !entries.isEmpty && (entries.count > maxEntries || residentBytes > budgetBytes) {
            _ = takeOldest()
            evicted += 1
        }
        return evicted
    }
}

extension InferenceSession {
    /// How many leading tokens of `prompt` `prepare` would keep from this session's cache:
    /// the common prefix, less the last prompt token, which is computed again for its logits.
    /// (Reuse is exact: a cached position holds what a fresh prefill computes.)
    func reusableLength(of prompt: [Int]) -> Int {
        max(0, min(commonPrefixLength(with: prompt), prompt.count - 1))
    }
}

/// A session's KV cache for a token prefix, as stored: what `InferenceSession.restore` puts
/// back into a session of the same model and cache width, so that the next `prefill`, `step`
/// or `prepare` computes bit for bit what it computes after a cold prefill of `tokens` (a
/// cached position holds the same bytes however it was computed). A disk cache writes it to
/// skip recomputing a long prompt after a restart.
@dynamicMemberLookup
public struct KVSnapshot: Sendable, Equatable {
    /// What the rows belong to: the prefix, its position regime, the cache's width and shape
    /// (read through the snapshot too: `snapshot.tokens`).
    public let layout: Layout
    /// Every layer's and kv head's rows for the prefix, keys then values, in the cache's row
    /// format (`KVCache.rows`).
    public let rows: [UInt8]

    public init(layout: Layout, rows: [UInt8]) {
        self.layout = layout
        self.rows = rows
    }

    public subscript<T>(dynamicMember field: KeyPath<Layout, T>) -> T { layout[keyPath: field] }

    /// What a snapshot's rows belong to, without the rows: enough for a session to check that
    /// it can take them before a byte is read (`InferenceSession.restore(_:rows:)` fills its
    /// cache straight from a file, with no copy of the rows in between).
    public struct Layout: Sendable, Equatable {
        /// The prefix the rows belong to: positions 0..<tokens.count.
        public let tokens: [Int]
        /// The position regime the keys were embedded in (LongRoPE: 1 for the long factors). A
        /// session whose regime for this length differs does not take it.
        public let regime: Int
        public let cacheWidth: KVCacheWidth
        /// The cache's shape: layers, kv heads, head dimension.
        public let layers: Int
        public let kvHeads: Int
        public let headDim: Int

        public init(
            tokens: [Int], regime: Int, cacheWidth: KVCacheWidth, layers: Int, kvHeads: Int,
            headDim: Int
        ) {
            self.tokens = tokens
            self.regime = regime
            self.cacheWidth = cacheWidth
            self.layers = layers
            self.kvHeads = kvHeads
            self.headDim = headDim
        }

        /// Bytes of the rows (`KVSnapshot.rows.count`).
        public var rowBytes: Int {
            cacheWidth.cacheBytes(
                layers: layers, kvHeads: kvHeads, headDim: headDim, positions: tokens.count)
        }
    }
}

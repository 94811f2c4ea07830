import PhiEngine

/// `inspect --ctx N`: what running the model at N tokens costs — the weights (mapped, all
/// resident once a forward pass has read them) plus the KV cache of N positions, for each
/// width phikit's engine can keep it in (`run --kv-bits`; 16 by default). The figure an app
/// developer compares with a phone's memory. Activation buffers (a few MB) are not counted.
public struct MemoryAtContext: Sendable, Equatable, Encodable {
    public struct Cache: Sendable, Equatable, Encodable {
        public var bits: Int
        public var kvCacheBytes: Int
        public var totalBytes: Int

        enum CodingKeys: String, CodingKey {
            case bits
            case kvCacheBytes = "kv_cache_bytes"
            case totalBytes = "total_bytes"
        }
    }

    public var context: Int
    public var weightBytes: Int
    /// float16 (run's default) first, then float32 and 8-bit.
    public var caches: [Cache]

    enum CodingKeys: String, CodingKey {
        case context, caches
        case weightBytes = "weight_bytes"
    }

    /// nil when the report has no config.json to size the cache from.
    public init?(_ report: InspectReport, context: Int) {
        guard let c = report.config else { return nil }
        self.context = context
        weightBytes = report.tensorBytes
        caches = [KVCacheWidth.float16, .float32, .int8].map { width in
            let kv = width.cacheBytes(
                layers: c.layers, kvHeads: c.kvHeads, headDim: c.headDim, positions: context)
            return Cache(bits: width.rawValue, kvCacheBytes: kv, totalBytes: report.tensorBytes + kv)
        }
    }
}

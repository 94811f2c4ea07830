import CKernels

extension KVCacheWidth {
    /// Bytes the KV cache of `positions` positions takes: keys and values of every layer and
    /// kv head, in this width's row format (8-bit keys carry their scales and zeros), exactly
    /// what `KVCache` maps for that capacity. What `inspect --ctx` and `eval` report.
    public func cacheBytes(layers: Int, kvHeads: Int, headDim: Int, positions: Int) -> Int {
        let keys = pk_kv_head_bytes(kind, 1, Int32(headDim), positions)
        let values = pk_kv_head_bytes(kind, 0, Int32(headDim), positions)
        return layers * kvHeads * (keys + values)
    }
}

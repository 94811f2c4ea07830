import CKernels

/// A block's per-token rows in one buffer: token t's row starts at `base + t * stride` (the
/// queries of a fused qkv row are followed by that token's keys and values, so the stride is
/// the whole row; separate projections have a stride of their own width).
struct TokenRows {
    let base: UnsafeMutablePointer<Float>
    let stride: Int

    subscript(token: Int) -> UnsafeMutablePointer<Float> { base + token * stride }
}

/// How one layer's attention is laid out, the same for every architecture: where the block's
/// projected queries, keys and values are, how many dims rotate and how far a query sees.
struct AttentionLayout {
    let sizes: TransformerSizes
    let queries: TokenRows
    let keys: TokenRows
    let values: TokenRows
    /// Rotated dims at the start of each head (NeoX "rotate_half"); headDim for full rotary.
    let ropeDim: Int
    /// Tokens a query sees, itself included; 0: unbounded.
    let window: Int
}

/// The queries, keys and values of a block for the architectures that project them with
/// separate matrices (llama, phi, phimoe): one buffer each, a token's row as wide as its heads.
struct SeparateQKV {
    let queries: FloatBuffer  // (block, heads*headDim)
    let keys: FloatBuffer  // (block, kvHeads*headDim)
    let values: FloatBuffer  // (block, kvHeads*headDim)

    init(_ s: TransformerSizes, block: Int) throws(SessionError) {
        queries = try FloatBuffer(count: block * s.queryDim)
        keys = try FloatBuffer(count: block * s.kvDim)
        values = try FloatBuffer(count: block * s.kvDim)
    }

    /// Attention over these rows.
    func layout(_ s: TransformerSizes, ropeDim: Int, window: Int) -> AttentionLayout {
        AttentionLayout(
            sizes: s, queries: TokenRows(base: queries.pointer, stride: s.queryDim),
            keys: TokenRows(base: keys.pointer, stride: s.kvDim),
            values: TokenRows(base: values.pointer, stride: s.kvDim), ropeDim: ropeDim,
            window: window)
    }
}

extension BlockActivations {
    /// One layer's attention for every span of the block into `attention`, each span over
    /// its own sequence's cache (`SequenceSpan.attend`), with the angles in `cos`/`sin`.
    func attend<Model>(
        _ spans: some Collection<SequenceSpan<Model>>, layer: Int, _ layout: AttentionLayout,
        pool: WorkerPool
    ) {
        for span in spans {
            span.attend(
                layer: layer, layout: layout, out: attention.pointer, cos: cos, sin: sin, pool: pool)
        }
    }
}

extension SequenceSpan {
    /// One layer's attention for this span's tokens, the step every architecture shares once
    /// its queries, keys and values are projected (and normalised, where it does that): rotate
    /// each token's queries and keys by its position's angles (token t's at `cos[t·ropeDim/2]`,
    /// `sin[…]`), store its keys and values in the sequence's cache at its position, then
    /// attend each query over the cache into `out` (token t's heads × headDim at
    /// `out + t·queryDim`).
    /// Per token and per head, nothing depends on the rest of the block.
    func attend(
        layer: Int, layout: AttentionLayout, out: UnsafeMutablePointer<Float>, cos: FloatBuffer,
        sin: FloatBuffer, pool: WorkerPool
    ) {
        let s = layout.sizes
        let (queries, keys, values) = (layout.queries, layout.keys, layout.values)
        let hd = Int32(s.headDim), rd = Int32(layout.ropeDim), half = layout.ropeDim / 2
        let cache = sequence.cache
        for i in 0..<count {
            let t = first + i
            pk_rope(queries[t], Int32(s.heads), hd, rd, cos[t * half], sin[t * half])
            pk_rope(keys[t], Int32(s.kvHeads), hd, rd, cos[t * half], sin[t * half])
            cache.store(
                layer: layer, position: p0 + i, keys: keys[t], values: values[t],
                kvHeads: s.kvHeads, headDim: s.headDim)
        }
        var job = pk_attention_job(
            q: queries[first], k: UnsafeRawPointer(cache.keys(layer: layer)),
            v: UnsafeRawPointer(cache.values(layer: layer)), out: out + first * s.queryDim,
            scores: sequence.state.scores.pointer, q_stride: queries.stride, tokens: count,
            pos0: p0, max_ctx: cache.capacity, window: layout.window, heads: Int32(s.heads),
            kv_heads: Int32(s.kvHeads), head_dim: hd,
            scale: Float(1 / Double(s.headDim).squareRoot()), isa: 0, kv_kind: cache.kind)
        pool.attention(&job)
    }
}

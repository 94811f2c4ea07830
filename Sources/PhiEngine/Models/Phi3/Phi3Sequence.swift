/// One sequence of a `Phi3Model`: its KV cache and activation buffers, allocated once.
final class Phi3Sequence: SequenceState {
    let model: Phi3Model
    let cache: KVCache
    let state: Phi3Buffers
    var block: Int { state.block }
    var capacity: Int { cache.capacity }

    init(
        model: Phi3Model, capacity: Int, block: Int, threads: Int, cacheWidth: KVCacheWidth
    ) throws(SessionError) {
        let s = model.shape
        self.model = model
        cache = try KVCache(
            layers: s.layers, kvHeads: s.kvHeads, headDim: s.headDim, capacity: capacity,
            width: cacheWidth)
        state = try Phi3Buffers(shape: s, block: block, capacity: capacity, threads: threads)
    }

    var logits: UnsafeBufferPointer<Float> {
        UnsafeBufferPointer(start: state.logits.pointer, count: model.shape.vocab)
    }
}

/// Activation buffers for decode steps of up to `maxSequences` Phi-3 sequences at once; each
/// sequence keeps its own KV cache and attention scores.
final class Phi3Batch: BatchState {
    let model: Phi3Model
    let buffers: Phi3Buffers
    let maxSequences: Int
    /// Reused across steps (nothing is allocated per token).
    private var spans: [Phi3Span] = []

    init(model: Phi3Model, maxSequences: Int, threads: Int) throws(SessionError) {
        self.model = model
        self.maxSequences = maxSequences
        buffers = try Phi3Buffers(
            shape: model.shape, block: maxSequences, capacity: 1, threads: threads,
            logitRows: maxSequences)
        spans.reserveCapacity(maxSequences)
    }

    func step(
        _ sequences: [any SequenceState], tokens: UnsafeBufferPointer<Int>, positions: [Int],
        regimes: [Int], pool: WorkerPool
    ) {
        spans.removeAll(keepingCapacity: true)
        for (i, sequence) in sequences.enumerated() {
            // swift-format-ignore: the session checked that every sequence is this model's
            let own = sequence as! Phi3Sequence
            spans.append(
                Phi3Span(sequence: own, first: i, count: 1, p0: positions[i], regime: regimes[i]))
        }
        model.forward(
            tokens, spans: spans, buffers: buffers, logitRows: sequences.count, pool: pool)
        let vocab = model.shape.vocab
        for (i, span) in spans.enumerated() {
            span.sequence.state.logits.pointer.update(
                from: buffers.logits.pointer + i * vocab, count: vocab)
        }
    }
}

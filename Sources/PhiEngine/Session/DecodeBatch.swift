/// Decode steps of several sessions of one model as one forward pass (continuous batching in
/// a server): each weight is read once for every session in the step, which is what decode
/// speed is made of, while each session keeps its own KV cache, positions and sampler. A
/// session can join or leave between any two steps.
///
/// The kernels compute each token's row the same way whatever else is in the call, so a
/// session stepped in a batch computes bit for bit what it computes stepped alone: greedy
/// answers do not depend on who else is being served, nor on which run-time adapter each of
/// them uses (`InferenceSession.adapter`).
public final class DecodeBatch {
    public let model: any CausalLanguageModel
    /// The most sessions one `step` takes.
    public let maxSequences: Int
    private let state: any BatchState
    private let pool: WorkerPool
    // Reused across steps.
    private var sequences: [any SequenceState] = []
    private var positions: [Int] = []
    private var regimes: [Int] = []
    private var batched: [Int] = []
    private var adapters: [Int?] = []

    /// A batch on the process's shared pool (the one sessions use by default).
    public convenience init(model: any CausalLanguageModel, maxSequences: Int) throws {
        try self.init(
            model: model, maxSequences: maxSequences,
            pool: WorkerPool.shared(threads: model.threads))
    }

    init(model: any CausalLanguageModel, maxSequences: Int, pool: WorkerPool) throws {
        guard maxSequences >= 1 else {
            throw SessionError.invalidContext(requested: maxSequences, maximum: Int.max)
        }
        self.model = model
        self.maxSequences = maxSequences
        self.pool = pool
        state = try model.makeBatchState(maxSequences: maxSequences, threads: pool.size)
        sequences.reserveCapacity(maxSequences)
        positions.reserveCapacity(maxSequences)
        regimes.reserveCapacity(maxSequences)
        batched.reserveCapacity(maxSequences)
        adapters.reserveCapacity(maxSequences)
    }

    /// Feeds `tokens[i]` to `sessions[i]`, as `sessions[i].step(tokens[i])` would; each
    /// session's `logits` then follow its token. Every session must be of this batch's model
    /// and pool, of one activation width, and appear once. A session whose token crosses a position-regime switch
    /// (LongRoPE) recomputes its whole sequence on its own, as a lone step would.
    public func step(_ sessions: [InferenceSession], tokens: [Int]) throws {
        precondition(sessions.count == tokens.count, "one token per session")
        precondition(sessions.count <= maxSequences, "more sessions than the batch holds")
        for (i, session) in sessions.enumerated() {
            precondition(session.model === model && session.pool === pool, "foreign session")
            precondition(
                session.activationWidth == sessions[0].activationWidth,
                "sessions of different activation widths")
            precondition(
                !sessions[..<i].contains { $0 === session }, "a session appears twice")
            try session.checkFits(CollectionOfOne(tokens[i]), after: session.position)
        }
        sequences.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        regimes.removeAll(keepingCapacity: true)
        batched.removeAll(keepingCapacity: true)
        adapters.removeAll(keepingCapacity: true)
        for (i, session) in sessions.enumerated() {
            if let regime = session.appendForBatch(tokens[i]) {
                sequences.append(session.sequence)
                positions.append(session.position - 1)
                regimes.append(regime)
                batched.append(tokens[i])
                adapters.append(session.adapter)
            } else {
                _ = try session.step(tokens[i])  // a regime switch: the whole sequence again
            }
        }
        guard !batched.isEmpty else { return }
        // Sessions with different adapters share the base product; each row adds its own
        // adapter's correction.
        let selection: AdapterSelection =
            adapters.allSatisfy({ $0 == adapters[0] }) ? .uniform(adapters[0]) : .perRow(adapters)
        try pool.exclusively(activations: sessions[0].activationWidth, adapters: selection) {
            batched.withUnsafeBufferPointer { tokens in
                state.step(
                    sequences, tokens: tokens, positions: positions, regimes: regimes, pool: pool)
            }
        }
    }
}

/// Steps of several sessions of one model as one forward pass (continuous batching in a
/// server): each weight is read once for every session in the step, which is what decode
/// speed is made of, while each session keeps its own KV cache, positions and sampler. A
/// session can join or leave between any two steps. A session may bring more than one token
/// to a step — its pending token and the draft to verify after it (speculative decoding in
/// the batch) — and gets the logits after each, as `InferenceSession.verify` gives them.
///
/// The kernels compute each token's row the same way whatever else is in the call, so a
/// session stepped in a batch computes bit for bit what it computes stepped alone: greedy
/// answers do not depend on who else is being served, nor on which run-time adapter each of
/// them uses (`InferenceSession.adapter`), nor on whether anyone drafts.
public final class DecodeBatch {
    public let model: any CausalLanguageModel
    /// The most sessions one `step` takes.
    public let maxSequences: Int
    /// The most tokens one `step` takes, all sessions together.
    public var maxTokens: Int { state.maxTokens }
    private let state: any BatchState
    private let pool: WorkerPool
    // Reused across steps.
    private var sequences: [any SequenceState] = []
    private var positions: [Int] = []
    private var regimes: [Int] = []
    private var counts: [Int] = []
    private var batched: [Int] = []
    private var adapters: [Int?] = []  // one per token row

    /// A batch on the process's shared pool (the one sessions use by default); `maxTokens`
    /// (default: one per session) bounds the tokens of one step.
    public convenience init(
        model: any CausalLanguageModel, maxSequences: Int, maxTokens: Int? = nil
    ) throws {
        try self.init(
            model: model, maxSequences: maxSequences, maxTokens: maxTokens,
            pool: WorkerPool.shared(threads: model.threads))
    }

    init(
        model: any CausalLanguageModel, maxSequences: Int, maxTokens: Int? = nil,
        pool: WorkerPool
    ) throws {
        guard maxSequences >= 1 else {
            throw SessionError.invalidContext(requested: maxSequences, maximum: Int.max)
        }
        self.model = model
        self.maxSequences = maxSequences
        self.pool = pool
        state = try model.makeBatchState(
            maxSequences: maxSequences, maxTokens: max(maxTokens ?? maxSequences, maxSequences),
            threads: pool.size)
        sequences.reserveCapacity(maxSequences)
        positions.reserveCapacity(maxSequences)
        regimes.reserveCapacity(maxSequences)
        counts.reserveCapacity(maxSequences)
        batched.reserveCapacity(state.maxTokens)
        adapters.reserveCapacity(state.maxTokens)
    }

    /// Feeds `tokens[i]` to `sessions[i]`, as `sessions[i].step(tokens[i])` would; each
    /// session's `logits` then follow its token.
    public func step(_ sessions: [InferenceSession], tokens: [Int]) throws {
        _ = try verify(sessions, blocks: tokens.map { [$0] })
    }

    /// Feeds `blocks[i]` (1…`maxVerifyTokens` tokens) to `sessions[i]` and returns the logits
    /// after each of its tokens: `rows[i]` is bit for bit what `sessions[i].verify(blocks[i])`
    /// returns, valid until that session's next call (a draft rejected is then forgotten with
    /// `rewind`). Every session must be of this batch's model and pool, of one activation
    /// width, and appear once; the blocks together at most `maxTokens`. A session whose block
    /// crosses a position-regime switch (LongRoPE), or whose cache is stale, is computed on
    /// its own, as its `verify` would.
    public func verify(_ sessions: [InferenceSession], blocks: [[Int]]) throws -> [LogitRows] {
        precondition(sessions.count == blocks.count, "one block per session")
        precondition(sessions.count <= maxSequences, "more sessions than the batch holds")
        precondition(
            blocks.reduce(0) { $0 + $1.count } <= maxTokens, "more tokens than the batch holds")
        for (i, session) in sessions.enumerated() {
            precondition(session.model === model && session.pool === pool, "foreign session")
            precondition(
                session.activationWidth == sessions[0].activationWidth,
                "sessions of different activation widths")
            precondition(
                !sessions[..<i].contains { $0 === session }, "a session appears twice")
            guard !blocks[i].isEmpty, blocks[i].count <= session.maxVerifyTokens else {
                throw SessionError.invalidBlock(
                    tokens: blocks[i].count, maximum: session.maxVerifyTokens)
            }
            try session.checkFits(blocks[i], after: session.position)
        }
        sequences.removeAll(keepingCapacity: true)
        positions.removeAll(keepingCapacity: true)
        regimes.removeAll(keepingCapacity: true)
        counts.removeAll(keepingCapacity: true)
        batched.removeAll(keepingCapacity: true)
        adapters.removeAll(keepingCapacity: true)
        var alone: [Int: LogitRows] = [:]
        for (i, session) in sessions.enumerated() {
            if let regime = session.appendForBatch(blocks[i]) {
                sequences.append(session.sequence)
                positions.append(session.position - blocks[i].count)
                regimes.append(regime)
                counts.append(blocks[i].count)
                batched.append(contentsOf: blocks[i])
                adapters.append(contentsOf: repeatElement(session.adapter, count: blocks[i].count))
            } else {
                alone[i] = try session.verify(blocks[i])  // a regime switch: as on its own
            }
        }
        if !sequences.isEmpty {
            // Sessions with different adapters share the base product; each row adds its own
            // adapter's correction.
            let selection: AdapterSelection =
                adapters.allSatisfy({ $0 == adapters[0] }) ? .uniform(adapters[0]) : .perRow(adapters)
            try pool.exclusively(activations: sessions[0].activationWidth, adapters: selection) {
                batched.withUnsafeBufferPointer { tokens in
                    state.step(
                        sequences, tokens: tokens, counts: counts, positions: positions,
                        regimes: regimes, pool: pool)
                }
            }
        }
        let vocab = model.vocabularySize
        return sessions.enumerated().map { i, session in
            alone[i]
                ?? LogitRows(
                    base: session.sequence.logits.baseAddress!, count: blocks[i].count,
                    vocabularySize: vocab)
        }
    }
}

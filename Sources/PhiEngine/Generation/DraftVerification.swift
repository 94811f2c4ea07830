extension InferenceSession {
    /// Feeds `fed` (the tokens chosen last) and then `draft`, and returns the logits of the
    /// last `draft.count + 1` positions, one vocabulary-sized row each: what
    /// `Generator.verify` reads. The drafted tokens stay in the cache; the caller rewinds
    /// what was not accepted.
    ///
    /// This reference feeds the draft one token at a time (exact, no faster than not
    /// drafting); a block forward that returns every position's logits replaces it.
    public func logitsForVerification(fed: [Int], draft: [Int]) throws -> [Float] {
        let vocab = model.vocabularySize
        var rows: [Float] = []
        rows.reserveCapacity((draft.count + 1) * vocab)
        rows.append(contentsOf: fed.count == 1 ? try step(fed[0]) : try prefill(fed))
        for token in draft { rows.append(contentsOf: try step(token)) }
        return rows
    }
}

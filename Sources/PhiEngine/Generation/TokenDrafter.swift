/// Proposes the tokens a sequence will probably continue with (speculative decoding: n-grams
/// of the context, a small draft model), for the model to verify in one block. One instance
/// per sequence, used on one thread. Drafts are deterministic guesses: the `Generator`
/// accepts a drafted token when the model's own choice agrees (greedy) or by the standard
/// acceptance rule for a one-hot draft distribution (sampling), so what is generated has
/// the same distribution as without a drafter — and, greedy, the same tokens.
public protocol TokenDrafter: AnyObject {
    /// Up to `limit` tokens proposed to follow `tokens` (the whole sequence so far: the
    /// prompt and what was generated, the token about to be fed last). [] proposes nothing.
    func draft(after tokens: [Int], limit: Int) -> [Int]
    /// `draft(after:limit:)` for a sequence whose block goes into a batched step with
    /// others (`batch` prices a draft there). Default: as alone.
    func draft(after tokens: [Int], limit: Int, in batch: BatchDraftContext) -> [Int]
    /// How the last proposal fared: `drafted` tokens proposed, the first `accepted` of them
    /// kept (for drafters that adapt their length).
    func observe(drafted: Int, accepted: Int)
}

extension TokenDrafter {
    public func draft(after tokens: [Int], limit: Int, in batch: BatchDraftContext) -> [Int] {
        draft(after: tokens, limit: limit)
    }
}

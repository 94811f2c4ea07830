import Testing

@testable import PhiEngine

/// The drafter's parts: the suffix automaton against a brute-force search, the cost model's
/// choices, and the drafter proposing the continuation of quoted text but nothing in new text.
@Suite("prompt lookup drafter")
struct PromptLookupDrafterTests {
    /// The longest suffix of `text` that also ends earlier, and the first (or the latest)
    /// earlier place it ends.
    static func bruteForceMatch(_ text: [Int], latest: Bool = false) -> (length: Int, end: Int)? {
        let n = text.count
        var best: (length: Int, end: Int)?
        for end in 0..<(n - 1) {
            var length = 0
            while length <= end && text[end - length] == text[n - 1 - length] { length += 1 }
            if length > 0 && (length > (best?.length ?? 0) || (latest && length == best?.length)) {
                best = (length, end)
            }
        }
        return best
    }

    @Test("the automaton's earlier match is the longest one, at its first and latest occurrences")
    func automatonMatchesBruteForce() {
        var random = RandomSource(seed: 7)
        for alphabet in [2, 3, 5, 40] {
            var automaton = SuffixAutomaton()
            var text: [Int] = []
            for _ in 0..<300 {
                // stretches copied from earlier, as quoting text does, between random tokens
                if text.count > 10 && random.next() % 4 == 0 {
                    let from = Int(random.next() % UInt64(text.count - 5))
                    for t in text[from..<from + 5] {
                        text.append(t)
                        automaton.append(t)
                    }
                } else {
                    let t = Int(random.next() % UInt64(alphabet)) * 1000
                    text.append(t)
                    automaton.append(t)
                }
                let expected = Self.bruteForceMatch(text)
                let found = automaton.earlierMatch
                #expect(found?.length == expected?.length, "alphabet \(alphabet) at \(text.count)")
                #expect(found?.end == expected?.end, "alphabet \(alphabet) at \(text.count)")
                #expect(
                    found?.latestEnd == Self.bruteForceMatch(text, latest: true)?.end,
                    "alphabet \(alphabet) at \(text.count)")
            }
            #expect(automaton.text == text)
        }
    }

    @Test("the cost model drafts long when drafts are kept and verifying is cheap, not at all otherwise")
    func costModelChoices() {
        var model = DraftCostModel(maxBlock: 9)
        let strong = DraftCostModel.matchClass(20)!
        let weak = DraftCostModel.matchClass(2)!
        #expect(DraftCostModel.matchClass(1) == nil)
        // a step 100 ms, blocks 100 ms + 10 ms a token: drafting is almost free
        for _ in 0..<5 {
            for n in 1...9 { model.recordBlock(tokens: n, seconds: 0.1 + 0.01 * Double(n - 1)) }
        }
        for _ in 0..<10 { model.recordDraft(matchClass: strong, drafted: 8, accepted: 8) }
        #expect(model.bestLength(matchClass: strong, limit: 8) == 8)
        #expect(model.bestLength(matchClass: strong, limit: 3) == 3)
        for _ in 0..<10 { model.recordDraft(matchClass: weak, drafted: 2, accepted: 0) }
        #expect(model.bestLength(matchClass: weak, limit: 8) == 0)
        // blocks that cost a step per token: nothing is worth verifying
        var expensive = DraftCostModel(maxBlock: 9)
        for n in 1...9 { expensive.recordBlock(tokens: n, seconds: 0.1 * Double(n)) }
        for _ in 0..<10 { expensive.recordDraft(matchClass: strong, drafted: 8, accepted: 7) }
        #expect(expensive.bestLength(matchClass: strong, limit: 8) == 0)
        // unmeasured lengths follow the measured ones' excess
        var partial = DraftCostModel(maxBlock: 9)
        partial.recordBlock(tokens: 1, seconds: 0.1)
        partial.recordBlock(tokens: 3, seconds: 0.2)
        #expect(partial.cost(3) == 2)
        #expect(partial.cost(9) > partial.cost(5) && partial.cost(5) > 2)
    }

    /// Drives `drafter` as a generator does over `answer`, the model's own tokens after
    /// `prompt`: drafts are accepted as far as they agree with the answer. Returns
    /// (blocks verified, tokens drafted, tokens accepted); `clock` then holds the time.
    static func replay(
        _ drafter: PromptLookupDrafter, prompt: [Int], answer: [Int], clock: FakeClock? = nil
    ) -> (blocks: Int, drafted: Int, accepted: Int) {
        var context = prompt + [answer[0]]
        var i = 1
        var blocks = 0
        while i < answer.count {
            let draft = drafter.draft(after: context, limit: 8)
            clock?.tick(draft.count)
            var kept = 0
            while kept < draft.count && i + kept < answer.count && draft[kept] == answer[i + kept] {
                kept += 1
            }
            if !draft.isEmpty { drafter.observe(drafted: draft.count, accepted: kept) }
            // the kept tokens, then the model's own next token
            let next = min(answer.count, i + kept + 1)
            context += answer[i..<next]
            i = next
            blocks += 1
        }
        return (blocks, drafter.drafted, drafter.accepted)
    }

    /// A clock that advances by what the block before cost: a decode step (0.1 s) up to 3
    /// tokens, a third of one per token beyond (a full-size model on 2 cores, issue 31).
    final class FakeClock {
        var now = 0.0
        func tick(_ drafted: Int) { now += 0.1 * max(1, Double(drafted + 1) / 3) }
    }

    @Test("quoted text is drafted in long runs; new text is left alone")
    func quotesAndNovelText() {
        var random = RandomSource(seed: 11)
        let passage = (0..<200).map { _ in Int(random.next() % 5000) }
        let preamble = (0..<30).map { _ in Int(random.next() % 5000) }
        // quoting: the answer repeats the passage with one token changed in the middle
        var quote = passage
        quote[100] = 7777
        let clock = FakeClock()
        let quoter = PromptLookupDrafter(maxDraft: 8, clock: { clock.now })
        let q = Self.replay(quoter, prompt: preamble + passage, answer: quote, clock: clock)
        #expect(q.accepted >= 120, "\(q)")
        // 199 decode steps without drafts (0.1 s each); verifying 3 tokens costs one step here,
        // so about 3 tokens per step is the best there is
        let speedup = 19.9 / clock.now
        #expect(speedup > 2.5, "\(q), \(clock.now) s")
        // new text: nothing earlier to copy from, so no drafts
        let novel = (0..<200).map { _ in 5000 + Int(random.next() % 5000) }
        let writer = PromptLookupDrafter(maxDraft: 8, clock: { 0 })
        let n = Self.replay(writer, prompt: preamble + passage, answer: novel)
        #expect(n.drafted == 0 && n.blocks == 199, "\(n)")
    }

    @Test("a text that repeats itself with variations: drafts stop when they keep failing")
    func gateStepsAside() {
        var random = RandomSource(seed: 5)
        // a small vocabulary: short matches everywhere, continuations that rarely agree
        let answer = (0..<400).map { _ in Int(random.next() % 6) }
        let drafter = PromptLookupDrafter(maxDraft: 8, clock: { 0 })
        let r = Self.replay(drafter, prompt: [], answer: answer)
        // each try costs a verify block; a working gate keeps wasted drafting small
        #expect(Double(r.drafted - r.accepted) < 0.25 * Double(answer.count), "\(r)")
    }

    @Test("a history that is not a continuation is indexed anew")
    func resync() {
        let drafter = PromptLookupDrafter(maxDraft: 4, clock: { 0 })
        let text = [5, 6, 7, 8, 9, 5, 6]
        #expect(drafter.draft(after: text, limit: 4).first == 7)
        #expect(drafter.draft(after: [1, 2, 3, 1, 2], limit: 4).first == 3)
        #expect(drafter.draft(after: [1, 2, 3, 1, 2], limit: 0) == [])
        #expect(drafter.draft(after: [1, 2, 3, 1, 2, 3], limit: 4).first == 1)
    }
}

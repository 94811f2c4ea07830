import CKernels
import Foundation

/// Picks each next token as mlx-lm does: a constraint's mask and the repetition penalty (then
/// OpenAI's presence and frequency penalties) on the logits, then greedy
/// (temperature 0) or the filters top-p → min-p → top-k on the *untempered* distribution,
/// then a draw from softmax(logits / temperature) over the tokens left. Filters keep ties
/// with their threshold, as mlx-lm's do. The draw uses `RandomSource`, so a seed repeats.
///
/// Buffers are allocated once (vocabulary-sized); `sample` allocates nothing.
public final class Sampler {
    public let parameters: GenerationParameters
    private var random: RandomSource
    private let vocab: Int
    private let working: UnsafeMutableBufferPointer<Float>  // (vocab) penalised logits
    private let candidates: UnsafeMutableBufferPointer<Int32>  // (vocab) token ids left
    private let seen: UnsafeMutableBufferPointer<UInt32>  // (vocab) penalty marks
    private var mark: UInt32 = 0

    public init(parameters: GenerationParameters, vocabularySize: Int) {
        self.parameters = parameters
        vocab = vocabularySize
        random = parameters.seed.map(RandomSource.init(seed:)) ?? RandomSource()
        working = .allocate(capacity: vocabularySize)
        candidates = .allocate(capacity: vocabularySize)
        seen = .allocate(capacity: vocabularySize)
        seen.initialize(repeating: 0)
    }

    deinit {
        working.deallocate()
        candidates.deallocate()
        seen.deallocate()
    }

    /// The next token after `history` (prompt and generated tokens so far), given the
    /// logits that follow it. `mask` (a `TokenConstraint`'s) leaves only its tokens;
    /// `generated` counts each token generated so far, for the presence and frequency
    /// penalties.
    public func sample(
        _ logits: UnsafeBufferPointer<Float>, history: some BidirectionalCollection<Int>,
        mask: TokenMask? = nil, generated: [Int: Int] = [:]
    ) -> Int {
        guard let count = prepare(logits, history: history, mask: mask, generated: generated)
        else { return pk_argmax(logits.baseAddress, vocab) }
        if parameters.temperature == 0 { return Int(candidates[0]) }
        // NaN logits (a broken model) fail every filter's comparison: nothing is left to draw
        // from, and the draw read the slot before the buffer. Greedy is the only answer.
        guard count > 0 else { return pk_argmax(working.baseAddress, vocab) }
        return draw(count)
    }

    /// Verifies a drafted token (speculative decoding) against the logits at its position:
    /// the token is the one `sample` picks there, and the draft is accepted when it is that
    /// token. Greedy, that is the agreeing-prefix rule. Sampling, it is the acceptance rule of
    /// speculative sampling for a draft that proposes one token with certainty — accept with
    /// probability p(draft), else draw from p without the draft — done with `sample`'s one
    /// draw: the draw is the draft with probability p(draft), and a draw that is not the
    /// draft is distributed as p without it. One draw per position, as without a drafter, so
    /// a seeded run gives the same tokens whatever was drafted (draft lengths follow
    /// measured timings, and a second draw on rejection made seeded runs differ with them).
    public func verify(
        draft: Int, _ logits: UnsafeBufferPointer<Float>,
        history: some BidirectionalCollection<Int>, mask: TokenMask? = nil,
        generated: [Int: Int] = [:]
    ) -> (token: Int, accepted: Bool) {
        let token = sample(logits, history: history, mask: mask, generated: generated)
        return (token, token == draft)
    }

    /// Puts the mask and the penalties on a copy of `logits` and filters it; returns how many
    /// candidates are left, or nil when the answer is the argmax of `logits` as they are
    /// (greedy with nothing to apply).
    private func prepare(
        _ logits: UnsafeBufferPointer<Float>, history: some BidirectionalCollection<Int>,
        mask: TokenMask?, generated: [Int: Int]
    ) -> Int? {
        precondition(logits.count == vocab, "logits of another vocabulary")
        let penalty = parameters.repetitionPenalty ?? 1
        let additive = parameters.presencePenalty != 0 || parameters.frequencyPenalty != 0
        let adjusted = penalty != 1 || mask != nil || (additive && !generated.isEmpty)
        if !adjusted && parameters.temperature == 0 { return nil }
        _ = working.initialize(from: logits)
        if let mask {
            precondition(mask.vocabularySize == vocab, "a mask of another vocabulary")
            for i in 0..<vocab where !mask[i] { working[i] = -.infinity }
        }
        if penalty != 1 { penalize(history.suffix(parameters.repetitionContextSize), penalty) }
        if additive { penalizeGenerated(generated) }
        if parameters.temperature == 0 {
            candidates[0] = Int32(pk_argmax(working.baseAddress, vocab))
            return 1
        }
        return filter(mask)
    }

    /// OpenAI's presence and frequency penalties: each token's logit goes down by
    /// `presencePenalty` once it has been generated and by `frequencyPenalty` per time.
    private func penalizeGenerated(_ generated: [Int: Int]) {
        for (token, count) in generated where token >= 0 && token < vocab && count > 0 {
            working[token] -=
                parameters.presencePenalty + parameters.frequencyPenalty * Float(count)
        }
    }

    /// mlx-lm's repetition penalty, once per distinct token.
    private func penalize(_ recent: some Collection<Int>, _ penalty: Float) {
        mark &+= 1
        if mark == 0 {  // wrapped: clear the old marks
            seen.update(repeating: 0)
            mark = 1
        }
        for token in recent where token >= 0 && token < vocab && seen[token] != mark {
            seen[token] = mark
            let l = working[token]
            working[token] = l < 0 ? l * penalty : l / penalty
        }
    }

    /// Leaves the surviving token ids in candidates[0..<count] (only tokens `mask` allows);
    /// returns count.
    private func filter(_ mask: TokenMask?) -> Int {
        let top = working[pk_argmax(working.baseAddress, vocab)]
        var count = 0
        let topP = parameters.topP
        if topP < 1 {
            count = nucleus(top: top, topP: topP)
        } else {
            for i in 0..<vocab where mask?[i] ?? true {
                candidates[count] = Int32(i)
                count += 1
            }
        }
        if parameters.minP > 0 {
            let threshold = top + log(parameters.minP)
            count = keep(count) { self.working[Int($0)] >= threshold }
        }
        if parameters.topK > 0 && parameters.topK < count {
            count = largest(parameters.topK, of: count)
        }
        return count
    }

    /// Tokens whose probability mass strictly above them is below topP of the total (and
    /// any tied with the last of them), as mlx-lm's apply_top_p.
    private func nucleus(top: Float, topP: Float) -> Int {
        var total = 0.0
        for i in 0..<vocab { total += Double(exp(working[i] - top)) }
        // A token below this share cannot be in the nucleus: even all tokens below it
        // together would hold less than 1 - topP of the mass (llama2.c's bound).
        let floor = vocab > 1 ? total * Double(1 - topP) / Double(vocab - 1) : 0
        var count = 0
        for i in 0..<vocab where Double(exp(working[i] - top)) >= floor {
            candidates[count] = Int32(i)
            count += 1
        }
        sortDescending(count)
        var above = 0.0
        var kept = 0
        while kept < count && above < Double(topP) * total {
            above += Double(exp(working[Int(candidates[kept])] - top))
            kept += 1
        }
        guard kept > 0 else { return 0 }  // NaN mass: `sample` falls back to greedy
        let threshold = working[Int(candidates[kept - 1])]
        while kept < count && working[Int(candidates[kept])] == threshold { kept += 1 }
        return kept
    }

    /// Keeps candidates[0..<count] that satisfy `predicate`, in order.
    private func keep(_ count: Int, _ predicate: (Int32) -> Bool) -> Int {
        var kept = 0
        for i in 0..<count where predicate(candidates[i]) {
            candidates[kept] = candidates[i]
            kept += 1
        }
        return kept
    }

    /// The k candidates with the largest logits (a min-heap of size k over the rest).
    private func largest(_ k: Int, of count: Int) -> Int {
        for i in stride(from: k / 2 - 1, through: 0, by: -1) { siftDown(i, heapSize: k) }
        for i in k..<count where working[Int(candidates[i])] > working[Int(candidates[0])] {
            candidates[0] = candidates[i]
            siftDown(0, heapSize: k)
        }
        return k
    }

    /// Heapsort of candidates[0..<count], largest logit first (min-heap, smallest to the end).
    private func sortDescending(_ count: Int) {
        guard count > 1 else { return }
        for i in stride(from: count / 2 - 1, through: 0, by: -1) { siftDown(i, heapSize: count) }
        for end in stride(from: count - 1, to: 0, by: -1) {
            candidates.swapAt(0, end)
            siftDown(0, heapSize: end)
        }
    }

    /// Min-heap on logits over candidates[0..<heapSize]; ties broken by the larger token id
    /// sinking, so equal logits sort by ascending id.
    private func siftDown(_ start: Int, heapSize: Int) {
        func less(_ a: Int32, _ b: Int32) -> Bool {
            let la = working[Int(a)]
            let lb = working[Int(b)]
            return la < lb || (la == lb && a > b)
        }
        var parent = start
        while true {
            var child = 2 * parent + 1
            guard child < heapSize else { return }
            if child + 1 < heapSize && less(candidates[child + 1], candidates[child]) {
                child += 1
            }
            guard less(candidates[child], candidates[parent]) else { return }
            candidates.swapAt(child, parent)
            parent = child
        }
    }

    /// A draw from softmax(logits / temperature) over candidates[0..<count].
    private func draw(_ count: Int) -> Int {
        var top = -Float.infinity
        for i in 0..<count { top = max(top, working[Int(candidates[i])]) }
        let inverse = 1 / parameters.temperature
        // A temperature so small that 1/t overflows (1e-40) makes (top - top) × ∞ NaN, and the
        // draw fell through to the last candidate; the limit of such a softmax is greedy.
        guard inverse.isFinite else { return bestCandidate(count) }
        var total = 0.0
        for i in 0..<count { total += Double(exp((working[Int(candidates[i])] - top) * inverse)) }
        var target = random.nextUnit() * total
        for i in 0..<count {
            target -= Double(exp((working[Int(candidates[i])] - top) * inverse))
            if target < 0 { return Int(candidates[i]) }
        }
        // Rounding left a sliver at the end; NaN or no mass at all (total 0 or NaN): greedy.
        return total > 0 ? Int(candidates[count - 1]) : bestCandidate(count)
    }

    /// The candidate with the largest logit (the lowest id among ties), NaN never chosen.
    private func bestCandidate(_ count: Int) -> Int {
        var best = Int(candidates[0])
        for i in 1..<max(count, 1) {
            let token = Int(candidates[i])
            if working[token] > working[best] || working[best].isNaN { best = token }
        }
        return best
    }
}

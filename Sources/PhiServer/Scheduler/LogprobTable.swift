import Foundation
import PhiEngine
import PhiText

/// Log-probabilities as OpenAI reports them: the log-softmax of the logits the sampler saw
/// (before temperature and filters), for the chosen token and the `top` likeliest ones.
struct LogprobTable {
    /// OpenAI's floor for a probability that underflows (JSON has no -infinity).
    static let floor = -9999.0

    static func entry(
        logits: UnsafeBufferPointer<Float>, chosen: Int, top: Int, tokenizer: Tokenizer,
        textOffset: Int
    ) -> TokenLogprob {
        var maximum = -Float.infinity
        for l in logits where l > maximum { maximum = l }
        var total = 0.0
        for l in logits { total += Double(exp(l - maximum)) }
        let logZ = Double(maximum) + Foundation.log(total)
        func logprob(_ id: Int) -> Double {
            let value = Double(logits[id]) - logZ
            return value.isFinite ? max(value, floor) : floor
        }
        let anchor = (try? tokenizer.encode("a", addSpecialTokens: false))?.last
        let alternatives = largest(top, of: logits).map {
            TokenLogprob.Alternative(
                token: text(of: $0, tokenizer, anchor: anchor), logprob: logprob($0))
        }
        return TokenLogprob(
            token: text(of: chosen, tokenizer, anchor: anchor), logprob: logprob(chosen), top: alternatives,
            textOffset: textOffset)
    }

    /// A token's text as it reads inside a text: decoded after an anchor token and without
    /// the anchor's text, because decoders strip a leading space at the very start
    /// (SentencePiece's "▁there" is " there" here, not "there").
    static func text(of id: Int, _ tokenizer: Tokenizer, anchor: Int?) -> String {
        guard let anchor else { return tokenizer.decode([id]) }
        let prefix = tokenizer.decode([anchor])
        let both = tokenizer.decode([anchor, id])
        guard both.hasPrefix(prefix) else { return tokenizer.decode([id]) }
        return String(both.dropFirst(prefix.count))
    }

    /// The ids of the k largest logits, largest first (ties: smaller id first).
    static func largest(_ k: Int, of logits: UnsafeBufferPointer<Float>) -> [Int] {
        guard k > 0 else { return [] }
        var best: [(id: Int, logit: Float)] = []
        best.reserveCapacity(k + 1)
        for (id, l) in logits.enumerated() {
            if best.count == k, let last = best.last, l <= last.logit { continue }
            let at = best.firstIndex { l > $0.logit } ?? best.count
            best.insert((id, l), at: at)
            if best.count > k { best.removeLast() }
        }
        return best.map(\.id)
    }
}

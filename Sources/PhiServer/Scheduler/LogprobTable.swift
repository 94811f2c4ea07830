import PhiEngine
import PhiText

/// Log-probabilities as OpenAI reports them: the engine's `TokenLogprobs` (ids and numbers)
/// with each token's text.
struct LogprobTable {
    static func entry(
        _ logprobs: TokenLogprobs, chosen: Int, tokenizer: Tokenizer, textOffset: Int
    ) -> TokenLogprob {
        let anchor = (try? tokenizer.encode("a", addSpecialTokens: false))?.last
        return TokenLogprob(
            token: text(of: chosen, tokenizer, anchor: anchor), logprob: logprobs.logprob,
            top: logprobs.top.map {
                TokenLogprob.Alternative(
                    token: text(of: $0.token, tokenizer, anchor: anchor), logprob: $0.logprob)
            },
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
}

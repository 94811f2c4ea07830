extension Tokenizer {
    /// The text of `ids` as tokenizers' `decode`: unknown ids are dropped, special added
    /// tokens too when `skipSpecialTokens`, and the decoder joins the rest.
    public func decode(_ ids: [Int], skipSpecialTokens: Bool = false) -> String {
        var incomplete = false
        return decodeText(
            ids, skipSpecialTokens: skipSpecialTokens, final: true, incomplete: &incomplete)
    }

    /// The token strings `decode` feeds to the decoder.
    func decoderInput(_ ids: some Sequence<Int>, skipSpecialTokens: Bool) -> [String] {
        ids.compactMap { id in
            guard let token = token(for: id) else { return nil }
            if skipSpecialTokens && specialContents.contains(token) { return nil }
            return token
        }
    }

    func decodeText(
        _ ids: some Sequence<Int>, skipSpecialTokens: Bool, final: Bool, incomplete: inout Bool
    ) -> String {
        let tokens = decoderInput(ids, skipSpecialTokens: skipSpecialTokens)
        guard let decoder else { return tokens.joined(separator: " ") }
        return decoder.decodeChain(tokens, final: final, incomplete: &incomplete).joined()
    }
}

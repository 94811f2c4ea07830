/// Decodes ids one at a time while they are generated, emitting text as soon as it is
/// complete UTF-8: a character split over several byte tokens (`<0xF0>` `<0x9F>` … or
/// byte-level pieces) comes out whole, once its last byte arrives.
///
/// Works for any decoder chain the same way: it re-decodes a short window — the tokens of the
/// previous emission as context, then the new ones — and emits what the window's text gained
/// (the approach of tokenizers' `DecodeStream`). The context keeps position-dependent decoders
/// right: a leading space is stripped only at the very start of the text.
///
/// For ids that encode text, the concatenated output equals `decode` of all ids. A byte token
/// that makes an already emitted character invalid (model output that is not UTF-8) cannot be
/// taken back: it is emitted as U+FFFD, where `decode` replaces the whole run.
public struct StreamingDecoder {
    private let tokenizer: Tokenizer
    private let skipSpecialTokens: Bool
    /// (context + pending) ids being decoded together.
    private var window: [Int] = []
    /// How many ids at the start of `window` were already emitted, and their text.
    private var contextCount = 0
    private var contextText = ""

    /// `context`: ids the text continues (the end of a prompt the answer is appended to), so
    /// that a leading space the decoder strips at the very start of a text ("▁upon" → "upon")
    /// is kept: "Once" + " upon", as `decode` of the whole sequence reads.
    public init(tokenizer: Tokenizer, skipSpecialTokens: Bool = false, continuing context: [Int] = []) {
        self.tokenizer = tokenizer
        self.skipSpecialTokens = skipSpecialTokens
        window = context
        contextCount = context.count
        contextText = context.isEmpty ? "" : tokenizer.decode(context, skipSpecialTokens: skipSpecialTokens)
    }

    /// Adds one id and returns the text that became complete ("" while a character is
    /// unfinished, or for ids that decode to nothing).
    public mutating func append(_ id: Int) -> String {
        window.append(id)
        var incomplete = false
        let text = tokenizer.decodeText(
            window, skipSpecialTokens: skipSpecialTokens, final: false, incomplete: &incomplete)
        if incomplete { return "" }
        guard text.utf8.starts(with: contextText.utf8) else {
            // The new id changed text already emitted (invalid bytes after a valid
            // character); it cannot be unsaid, so mark the damage and start afresh.
            window.removeAll()
            contextCount = 0
            contextText = ""
            return "\u{FFFD}"
        }
        guard text.utf8.count > contextText.utf8.count else { return "" }
        let emitted = String(decoding: text.utf8.dropFirst(contextText.utf8.count), as: UTF8.self)
        window.removeFirst(contextCount)
        contextCount = window.count
        contextText = tokenizer.decode(window, skipSpecialTokens: skipSpecialTokens)
        return emitted
    }

    /// Returns whatever is still pending (an unfinished character becomes U+FFFD, as in
    /// `decode`) and resets the decoder.
    public mutating func flush() -> String {
        defer {
            window.removeAll()
            contextCount = 0
            contextText = ""
        }
        guard window.count > contextCount else { return "" }
        let text = tokenizer.decode(window, skipSpecialTokens: skipSpecialTokens)
        guard text.utf8.starts(with: contextText.utf8) else { return "\u{FFFD}" }
        return String(decoding: text.utf8.dropFirst(contextText.utf8.count), as: UTF8.self)
    }
}

import PhiEngine
import PhiFormats
import PhiText
import TestSupport
import Testing

/// The vocabulary structured output matches against, from the real tokenizers: SentencePiece
/// (Phi-3.5: `▁` is a space a piece keeps, `<0x0A>` is the byte) and byte-level BPE
/// (Phi-4-mini), and the forced text fed from the tokenizer's own encoding.
@Suite("structured output: the tokenizers' vocabularies")
struct StructuredVocabularyTests {
    static func vocabulary(_ directory: String) throws -> (Tokenizer, TokenVocabulary) {
        let tokenizer = try Tokenizer.load(directory: try TestPaths.shared(directory))
        let vocabulary = TokenVocabulary(
            pieces: tokenizer.tokenPieces(),
            encode: { (try? tokenizer.encode($0, addSpecialTokens: false)) ?? [] })
        return (tokenizer, vocabulary)
    }

    static let schema = #"{"type":"object","properties":{"first_name":{"type":"string"},"age":{"type":"integer"}},"required":["first_name","age"]}"#

    @Test("SentencePiece: a ▁ piece starts with its space; the answer's first token has none; forced text is never a piece it is not")
    func sentencePiece() throws {
        let (tokenizer, vocabulary) = try Self.vocabulary("microsoft--Phi-3.5-mini-instruct")
        let spaced = try #require(tokenizer.tokenID(for: "▁{"))
        let bare = try #require(tokenizer.tokenID(for: "{"))
        let newline = try #require(tokenizer.tokenID(for: "<0x0A>"))
        #expect(vocabulary.piece(spaced) == Array(" {".utf8))
        #expect(vocabulary.piece(bare) == Array("{".utf8))
        #expect(vocabulary.piece(newline) == [0x0A])
        let matcher = GrammarMatcher(
            grammar: try OutputFormat.jsonSchema(text: Self.schema).compile(), vocabulary: vocabulary)
        let first = matcher.allowedTokenIDs()
        #expect(first.contains(bare) && !first.contains(spaced))
        // The tokenizer writes `"first_name":` as `▁"first…` (its prefix space): not this
        // text, so nothing is forced from its encoding — only what is the sole choice.
        try matcher.advance(bare)
        for token in matcher.forcedTokens(limit: 20) {
            #expect(matcher.copyAccepts(prefix: vocabulary.piece(token)!))
            try matcher.advance(token)
        }
    }

    @Test(
        "byte-level BPE: forced keys are fed as the tokenizer writes them, the last token left to the model",
        .tags(.slow), .skippedWhenFast)
    func byteLevel() throws {
        let (tokenizer, vocabulary) = try Self.vocabulary("_derived/microsoft--Phi-4-mini-instruct")
        let matcher = GrammarMatcher(
            grammar: try OutputFormat.jsonSchema(text: Self.schema).compile(), vocabulary: vocabulary)
        let forced = matcher.forcedTokens(limit: 20)
        let key = Array(#"{"first_name":""#.utf8)
        let expected = try tokenizer.encode(String(decoding: key, as: UTF8.self), addSpecialTokens: false)
        #expect(forced == Array(expected.dropLast()) && !forced.isEmpty)
        for token in forced { try matcher.advance(token) }
        // The model writes the key's last token, the value, and the next key.
        let fed = forced.reduce(0) { $0 + (vocabulary.piece($1)?.count ?? 0) }
        #expect(matcher.advance(bytes: Array(key[fed...]) + Array("Ada\",\"age\":3".utf8)))
        #expect(matcher.forcedTokens(limit: 20) == [])  // another digit, or the end
        #expect(matcher.canEnd == false && matcher.copyAccepts(prefix: Array("}".utf8)))
    }

    /// The walks along byte runs take the run's tokens from a skeleton kept per vocabulary
    /// (the key loop's built ahead, a key's first-byte shape narrowed from it): on the real
    /// 200k-token vocabulary, each mask is exactly the tokens whose bytes the grammar takes.
    @Test(
        "byte-level BPE: masks along keys off the declared ones and emails are every token the grammar takes",
        .tags(.slow), .skippedWhenFast)
    func byteRunsExact() throws {
        let (_, vocabulary) = try Self.vocabulary("_derived/microsoft--Phi-4-mini-instruct")
        let cases: [(schema: String, prefixes: [String])] = [
            (
                #"{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":{"type":"string"}}"#,
                [#"{"id":3,""#, #"{"id":3,"i"#, #"{"id":3,"ex"#]
            ),
            (
                #"{"type":"array","items":{"type":"string","format":"email"}}"#,
                [#"[""#, #"["ada.l"#, #"["ada@ex"#, #"["a@b.co"#]
            ),
        ]
        for (schema, prefixes) in cases {
            let grammar = try OutputFormat.jsonSchema(text: schema).compile()
            for prefix in prefixes {
                let matcher = GrammarMatcher(grammar: grammar, vocabulary: vocabulary)
                #expect(matcher.advance(bytes: Array(prefix.utf8)))
                let expected = (0..<vocabulary.size).filter { t in
                    vocabulary.piece(t).map { matcher.copyAccepts(prefix: $0) } ?? false
                }
                #expect(matcher.allowedTokenIDs() == expected, "after \(prefix)")
            }
        }
    }
}

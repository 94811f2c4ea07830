import Testing

@testable import PhiText

/// `tokenPieces()`: the bytes structured output matches each token against. Joined along an
/// encoding they must give the decoded text back (byte-level BPE and SentencePiece alike);
/// SentencePiece's decoder drops the text's leading space, which a piece keeps.
@Suite("token pieces")
struct TokenPiecesTests {
    @Test("pieces joined along the corpus encodings are the decoded text", arguments: ["phi2like", "stories260k", "phi4mini"])
    func joinedPiecesDecode(_ name: String) throws {
        let tokenizer = try TokenizerFixtures.tokenizer(name)
        let pieces = tokenizer.tokenPieces()
        #expect(pieces.count == tokenizer.vocabularySize)
        for text in TokenizerFixtures.corpus.prefix(60) {
            let ids = try tokenizer.encode(text, addSpecialTokens: false)
            let joined = ids.flatMap { pieces[$0] ?? [] }
            let decoded = Array(tokenizer.decode(ids).utf8)
            guard let valid = String(validating: joined, as: UTF8.self) else {
                Issue.record("\(name): pieces of \(text.debugDescription) are not UTF-8")
                continue
            }
            #expect(Array(valid.utf8) == decoded || Array(valid.utf8) == [0x20] + decoded, "\(name): \(text.debugDescription)")
        }
    }

    @Test("special added tokens are no text")
    func specialTokens() throws {
        let tokenizer = try TokenizerFixtures.tokenizer("phi4mini")
        let pieces = tokenizer.tokenPieces()
        for token in tokenizer.addedTokens where token.special {
            #expect(pieces[token.id] == nil, "\(token.content)")
        }
    }
}

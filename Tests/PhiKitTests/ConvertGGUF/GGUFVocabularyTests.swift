import PhiFormats
import PhiText
import Testing

@testable import PhiKit

/// Every GGUF token id is in the converted tokenizer.json, spelled with the file's bytes:
/// mlx_lm.load failed on a converted Phi-3.5 because six Greek pieces that Swift's `==` calls
/// equal to another token (canonical equivalence: U+1F77 'ί' and U+03AF 'ί') were dropped.
@Suite struct GGUFVocabularyTests {
    static let iotaOxia = "\u{1F77}"  // Phi-3.5 id 30873
    static let iotaTonos = "\u{03AF}"  // its canonical equivalent, a different token
    /// `x` is written twice byte for byte (ids 8 and 9), which tokenizer.json cannot hold twice.
    static let tokens = [
        "<unk>", "<s>", "</s>", "\u{2581}a", "b", iotaOxia, iotaTonos, "\u{2581}ab", "x", "x",
        "e\u{301}", "\u{E9}",
    ]
    static let types = [2, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1]

    static func vocabulary() throws -> (json: JSONValue, pairs: [(key: String, value: JSONValue)]) {
        let json = try GGUFTokenStripTests.tokenizer(name: "t", tokens: tokens, types: types)
        guard case .object(let pairs)? = json["model"]?["vocab"] else {
            throw GGUFConvertError.badTokenizer(path: "t.gguf", detail: "no model.vocab object")
        }
        return (json, pairs)
    }

    @Test func idsAreDenseAndPiecesKeepTheirBytes() throws {
        let pairs = try Self.vocabulary().pairs
        #expect(pairs.map { $0.value.intValue } == Array(Self.tokens.indices))
        for (i, pair) in pairs.enumerated() where i != 8 {
            #expect(Array(pair.key.utf8) == Array(Self.tokens[i].utf8), "id \(i): \(pair.key)")
        }
        // The repeat: the last id keeps the text (llama.cpp's text → id), the first stays an id.
        #expect(pairs[9].key == "x")
        #expect(pairs[8].key == "[DUPLICATE_8]")
    }

    /// phikit's own tokenizer (byte-exact, refuses a repeated key) reads what convert wrote and
    /// gives each id back with the GGUF's bytes.
    @Test func phikitTokenizerReadsEveryID() throws {
        let json = try Self.vocabulary().json
        let tokenizer = try Tokenizer(
            tokenizerJSON: Array(json.pythonJSONDump(indent: 2).utf8), source: "t.json")
        #expect(tokenizer.vocabularySize == Self.tokens.count)
        for i in Self.tokens.indices where i != 8 {
            #expect(tokenizer.token(for: i).map { Array($0.utf8) } == Array(Self.tokens[i].utf8))
        }
        #expect(Array(tokenizer.decode([5, 6]).utf8) == Array((Self.iotaOxia + Self.iotaTonos).utf8))
    }

    /// A user-defined token (Phi-3.5's `</s>`) is matched in the raw text, as llama.cpp
    /// does, and spelled as the GGUF spells it.
    @Test func userDefinedTokensAreNotNormalized() throws {
        let json = try GGUFTokenStripTests.tokenizer(
            name: "t", tokens: ["<unk>", "<s>", "</s>", "\u{2581}a"], types: [2, 3, 4, 1])
        let added = try #require(json["added_tokens"]?.arrayValue)
        #expect(added.map { $0["normalized"]?.boolValue } == [false, false, false])
        let tokenizer = try Tokenizer(
            tokenizerJSON: Array(json.pythonJSONDump(indent: 2).utf8), source: "t.json")
        #expect(tokenizer.token(for: 2) == "</s>")
    }

    @Test func mergesUsePiecesByBytes() {
        // Only the U+1F77 'ί' is a piece: "b" + U+03AF must not count as two known halves.
        let pieces = ["b", Self.iotaOxia, "b" + Self.iotaTonos, "b" + Self.iotaOxia]
        let merges = GGUFTokenizer.sentencePieceMerges(
            pieces, [0, -1, -2, -3], [GGUFTokenizer.TokenType](repeating: .normal, count: 4))
        #expect(merges.map { Array(($0.0 + "|" + $0.1).utf8) } == [Array(("b|" + Self.iotaOxia).utf8)])
    }
}

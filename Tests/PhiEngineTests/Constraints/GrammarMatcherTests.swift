import PhiFormats
import TestSupport
import Testing

@testable import PhiEngine

/// The token-level matcher: its trie walk allows exactly the tokens whose bytes the grammar
/// takes (checked token by token), characters split across tokens, forced runs, and the end.
@Suite("grammar matcher")
struct GrammarMatcherTests {
    /// A vocabulary like a byte-level BPE one: all 256 bytes, then random pieces cut from
    /// JSON-ish text with multi-byte characters (some cut mid-character), duplicates and a
    /// special token.
    static let vocabulary: TokenVocabulary = {
        var rng = SplitMix(seed: 29)
        let corpus = Array(
            #"{"name":"Ada é ✓","age":36,"tags":["a","b"],"ok":true,"n":null,"x":-1.5e3} \n"#.utf8)
        var pieces: [[UInt8]?] = (0..<256).map { [UInt8($0)] }
        for _ in 0..<3000 {
            let start = Int(rng.next() % UInt64(corpus.count))
            let length = 1 + Int(rng.next() % 7)
            pieces.append(Array(corpus[start..<min(corpus.count, start + length)]))
        }
        pieces.append(Array("<|end|>".utf8))
        pieces.append(nil)
        return TokenVocabulary(pieces: pieces, special: [pieces.count - 2])
    }()

    /// The allowed tokens by walking each token's bytes alone.
    static func bruteForce(_ matcher: GrammarMatcher) -> [Int] {
        (0..<vocabulary.size).filter { t in
            guard let piece = vocabulary.piece(t) else { return false }
            return matcher.copyAccepts(prefix: piece)
        }
    }

    @Test("the trie walk allows exactly the tokens a token-by-token check allows, on random walks")
    func walkEqualsBruteForce() throws {
        let schema = try OutputFormat.jsonSchema(
            text: #"{"type":"object","properties":{"name":{"type":"string"},"age":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}},"ok":{"type":"boolean"}},"required":["name"]}"#)
        var rng = SplitMix(seed: 7)
        for run in 0..<6 {
            let matcher = GrammarMatcher(grammar: try schema.compile(), vocabulary: Self.vocabulary)
            var steps = 0
            while !matcher.isComplete && steps < 60 {
                let allowed = matcher.allowedTokenIDs()
                #expect(allowed == Self.bruteForce(matcher), "run \(run) step \(steps)")
                guard !allowed.isEmpty else { break }
                // Prefer closing tokens later on so that walks finish.
                let choice = allowed[Int(rng.next() % UInt64(allowed.count))]
                try matcher.advance(choice)
                steps += 1
            }
        }
    }

    @Test("a character split across tokens: the first half is allowed only where the whole is")
    func splitCharacters() throws {
        let vocabulary = TokenVocabulary(pieces: [[0xC3], [0xA9], [0xE2, 0x9C], [0x93], Array("a".utf8)])
        let matcher = GrammarMatcher(grammar: try OutputFormat.regex("é+").compile(), vocabulary: vocabulary)
        #expect(matcher.allowedTokenIDs() == [0])
        try matcher.advance(0)
        #expect(matcher.allowedTokenIDs() == [1])
        #expect(!matcher.canEnd)
        try matcher.advance(1)
        #expect(matcher.canEnd && !matcher.isComplete)
        #expect(throws: ConstraintError.self) { try matcher.advance(4) }
    }

    @Test("forced tokens: the only choices in a row, none where the grammar branches or may end")
    func forced() throws {
        let vocabulary = TokenVocabulary(pieces: ["{", "\"", "key", "\":", "1", "2", "}", "\"x"].map { Array($0.utf8) })
        let matcher = GrammarMatcher(
            grammar: try OutputFormat.jsonSchema(text: #"{"properties":{"key":{"enum":[1,2]}},"required":["key"]}"#).compile(),
            vocabulary: vocabulary)
        #expect(matcher.forcedTokens(limit: 10) == [0, 1, 2])
        #expect(matcher.forcedTokens(limit: 2) == [0, 1])
        for t in [0, 1, 2] { try matcher.advance(t) }
        #expect(matcher.forcedTokens(limit: 10) == [])  // `"` or `":`
        try matcher.advance(3)
        #expect(matcher.forcedTokens(limit: 10) == [])  // 1 or 2
        try matcher.advance(5)
        #expect(matcher.forcedTokens(limit: 10) == [6])
        try matcher.advance(6)
        #expect(matcher.isComplete && matcher.canEnd)
        #expect(matcher.allowedTokenIDs() == [])
    }

    @Test("forced text: what the grammar forces byte by byte, as the tokenizer encodes it, its last token only when nothing allowed reaches past it")
    func forcedText() throws {
        // A longest-match tokenizer over these pieces; "▁x" stands for a SentencePiece
        // tokenizer's prefix space, which is not the forced text.
        let pieces = ["{", "\"", "name", "\":", "\",\"", "age", "a", "1", "}", ",", ":", " x"]
        let bytes = pieces.map { Array($0.utf8) }
        let encode: @Sendable (String) -> [Int] = { text in
            var rest = Array(text.utf8)
            var ids: [Int] = []
            while !rest.isEmpty {
                let id = bytes.indices.filter { rest.starts(with: bytes[$0]) }
                    .max { bytes[$0].count < bytes[$1].count }!
                ids.append(id)
                rest.removeFirst(bytes[id].count)
            }
            return ids
        }
        let vocabulary = TokenVocabulary(pieces: bytes, encode: encode)
        let grammar = try OutputFormat.jsonSchema(
            text: #"{"properties":{"name":{"type":"integer"},"age":{"type":"integer"}},"required":["name","age"]}"#
        ).compile()
        let matcher = GrammarMatcher(grammar: grammar, vocabulary: vocabulary)
        // `{"name` is forced token by token (each the only choice); then the text `":` as
        // the tokenizer writes it — its last token too, as no allowed token reaches past it.
        #expect(matcher.forcedTokens(limit: 10) == [0, 1, 2, 3])
        for t in [0, 1, 2, 3, 7] { try matcher.advance(t) }
        #expect(matcher.forcedTokens(limit: 10) == [])  // another digit, or `,"age":`
        try matcher.advance(9)
        // `"` is the only token; then `age":` is forced text (`age` or `a`…): `age` and `":`.
        #expect(matcher.forcedTokens(limit: 10) == [1, 5, 3])
        #expect(matcher.forcedTokens(limit: 1) == [1])
        // A token that could merge with what follows (`":1`) leaves the last one to the model.
        let merging = GrammarMatcher(
            grammar: grammar, vocabulary: TokenVocabulary(pieces: bytes + [Array("\":1".utf8)], encode: encode))
        #expect(merging.forcedTokens(limit: 10) == [0, 1, 2])
        // Without the tokenizer's encoding only the only-choice tokens are forced.
        let plain = GrammarMatcher(grammar: grammar, vocabulary: TokenVocabulary(pieces: bytes))
        for t in [0, 1, 2, 3, 7, 9] { try plain.advance(t) }
        #expect(plain.forcedTokens(limit: 10) == [1])
        // A text encoded with other bytes (a prefix space) is not forced.
        let spaced = GrammarMatcher(
            grammar: try OutputFormat.regex("xyz[ab]").compile(),
            vocabulary: TokenVocabulary(pieces: bytes + [Array("y".utf8), Array("z".utf8)], encode: { _ in [12, 13, 14] }))
        #expect(spaced.forcedTokens(limit: 10) == [])
    }

    @Test("the mask is written into a TokenMask whatever its density")
    func maskDensity() throws {
        let matcher = GrammarMatcher(grammar: try OutputFormat.regex("[^x]*").compile(), vocabulary: Self.vocabulary)
        var mask = TokenMask(vocabularySize: Self.vocabulary.size + 5)
        matcher.allow(&mask)
        #expect(mask.allowedTokens == Self.bruteForce(matcher))
        #expect(!mask[Self.vocabulary.size - 2] && !mask[Self.vocabulary.size + 3])
    }
}

/// splitmix64, for repeatable random walks.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        return SeededWeights.mix(state)
    }
}

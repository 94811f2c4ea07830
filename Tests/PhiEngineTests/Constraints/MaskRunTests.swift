import Testing

@testable import PhiEngine

/// The mask's fast paths — counted runs of string characters (`minLength`/`maxLength`) taken
/// from the vocabulary's per-length masks, and runs of one byte set (`pattern`, `format`, a
/// key off the declared ones) whose trie subtrees are allowed whole — give exactly the tokens
/// a token-by-token check allows, on byte-level and SentencePiece-like vocabularies with
/// tokens longer than the precomputed lengths and than the followed runs.
@Suite("grammar matcher: runs")
struct MaskRunTests {
    /// Random pieces cut from text with letters, digits, `@`, `.`, `-`, quotes, escapes,
    /// spaces and multi-byte characters, some long (past `LengthSlice.cumulative` and
    /// `GrammarMatcher.longestByteRun`), some cut mid-character, plus `single` (each byte as
    /// a token, as byte-level BPE and SentencePiece's byte fallback have).
    static func vocabulary(seed: UInt64, spacePrefix: Bool) -> TokenVocabulary {
        var rng = SplitMix(seed: seed)
        let text =
            #"{"id":7,"code":"ab","mail":"ada.lovelace@example.org","x":"é✓ \"q\" \\ tab\t"} "#
            + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.@ 2025-03-01T09:00:00Z "
            + "0f8fad5b-d9cb-469f-a165-70867728950e averyveryverylongidentifierwithoutanybreakinside"
        let corpus = Array(text.utf8)
        var pieces: [[UInt8]?] = (0..<256).map { [UInt8($0)] }
        for _ in 0..<1500 {
            let start = Int(rng.next() % UInt64(corpus.count))
            let length = 1 + Int(rng.next() % (rng.next() % 4 == 0 ? 30 : 8))
            var piece = Array(corpus[start..<min(corpus.count, start + length)])
            // SentencePiece-like: words carry their leading space (▁) instead of trailing ones.
            if spacePrefix && piece.first != 0x20 && rng.next() % 3 == 0 { piece.insert(0x20, at: 0) }
            pieces.append(piece)
        }
        pieces.append(Array("<|end|>".utf8))
        return TokenVocabulary(pieces: pieces, special: [pieces.count - 1])
    }

    static let vocabularies = [
        vocabulary(seed: 11, spacePrefix: false), vocabulary(seed: 12, spacePrefix: true),
    ]

    static func bruteForce(_ matcher: GrammarMatcher, _ vocabulary: TokenVocabulary) -> [Int] {
        (0..<vocabulary.size).filter { t in
            guard let piece = vocabulary.piece(t) else { return false }
            return matcher.copyAccepts(prefix: piece)
        }
    }

    /// Random walks through `schema`, checking every step's mask (computed, then cached).
    static func check(_ schema: String, runs: Int = 3, seed: UInt64) throws {
        let format = try OutputFormat.jsonSchema(text: schema)
        for (v, vocabulary) in vocabularies.enumerated() {
            var rng = SplitMix(seed: seed &+ UInt64(v))
            for run in 0..<runs {
                let matcher = GrammarMatcher(grammar: try format.compile(), vocabulary: vocabulary)
                var steps = 0
                while !matcher.isComplete && steps < 30 {
                    let allowed = matcher.allowedTokenIDs()
                    #expect(
                        allowed == bruteForce(matcher, vocabulary),
                        "\(schema): vocabulary \(v) run \(run) step \(steps)")
                    #expect(matcher.allowedTokenIDs() == allowed, "cached mask")
                    guard !allowed.isEmpty else { break }
                    try matcher.advance(allowed[Int(rng.next() % UInt64(allowed.count))])
                    steps += 1
                }
            }
        }
    }

    @Test("strings of bounded length: the tokens of at most the characters left", arguments: [
        #"{"type":"string","minLength":2,"maxLength":4}"#,
        #"{"type":"string","maxLength":1}"#,
        #"{"type":"string","minLength":3}"#,
        #"{"type":"string","minLength":5,"maxLength":23}"#,
        #"{"type":"object","properties":{"code":{"type":"string","minLength":2,"maxLength":4},"note":{"type":"string","maxLength":40}},"required":["code","note"]}"#,
    ])
    func boundedStrings(schema: String) throws {
        try Self.check(schema, seed: 5)
    }

    @Test("patterns, formats and keys off the declared ones: byte runs", arguments: [
        #"{"type":"string","format":"email"}"#,
        #"{"type":"string","format":"uuid"}"#,
        #"{"type":"string","format":"date-time"}"#,
        #"{"type":"string","pattern":"^[a-z]{2,12}-[0-9A-F]{1,20}$"}"#,
        #"{"type":"string","pattern":"^[a-zA-Z0-9_]*$"}"#,
        #"{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":{"type":"string","maxLength":9}}"#,
    ])
    func byteRuns(schema: String) throws {
        try Self.check(schema, seed: 9)
    }

    /// A run's skeleton (`ByteRunSkeleton`) is kept per vocabulary and shared by grammars
    /// that continue differently where the run is left: the keys below run like those of
    /// `byteRuns` (first any byte but `i`, then any) with another declared key after the
    /// `i`, and the emails in an array close into `,` and `]`, not the string's end.
    @Test("byte-run skeletons shared across grammars", arguments: [
        #"{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"],"additionalProperties":{"type":"string","maxLength":9}}"#,
        #"{"type":"object","properties":{"in":{"type":"boolean"}},"additionalProperties":{"type":"integer"}}"#,
        #"{"type":"array","items":{"type":"string","format":"email"},"maxItems":3}"#,
        #"{"type":"string","format":"email"}"#,
    ])
    func sharedSkeletons(schema: String) throws {
        try Self.check(schema, runs: 2, seed: 21)
    }

    @Test("a key's skeleton narrowed from the key loop's is the one a walk builds")
    func narrowedSkeleton() {
        for vocabulary in Self.vocabularies {
            let key = (0..<256).map { JSONSchemaCompiler.keyBytes.contains(UInt8($0)) }
            var first = key
            for byte in "ia ".utf8 { first[Int(byte)] = false }
            let shape = ByteRunShape(sets: [first, key], loops: true, length: 1)
            #expect(shape.narrowedLoop == ByteRunShape.keyLoop)
            let narrowed = vocabulary.skeleton(shape)
            let walked = ByteRunSkeleton(shape: shape, trie: vocabulary.all, vocabularySize: vocabulary.size)
            #expect(narrowed.words == walked.words)
            #expect(narrowed.count == walked.count)
            #expect(narrowed.exits == walked.exits)
            #expect(narrowed.groups.map { [$0.step, Int32($0.byte), $0.from, $0.to] } == walked.groups.map { [$0.step, Int32($0.byte), $0.from, $0.to] })
        }
    }

    @Test("per-length masks: the tokens no longer than k, for every k")
    func lengthSlice() {
        var rng = SplitMix(seed: 3)
        let members = (0..<500).map { (token: $0 * 3, length: 1 + Int(rng.next() % 40)) }
        let slice = LengthSlice(vocabularySize: 1500, members: members)
        #expect(slice.longest == members.map(\.length).max())
        for k in 1...45 {
            let (words, count) = slice.tokens(upTo: k)
            let expected = Set(members.filter { $0.length <= k }.map(\.token))
            let got = Set((0..<1500).filter { words[$0 >> 6] & (1 << UInt64($0 & 63)) != 0 })
            #expect(got == expected, "k \(k)")
            #expect(count == expected.count)
        }
    }

    @Test("subtree summaries: each node's bytes, deepest token and tokens in trie order")
    func subtrees() {
        let vocabulary = Self.vocabularies[0]
        let trie = vocabulary.all
        for i in stride(from: 0, to: trie.nodes.count, by: 37) {
            let end = Int(trie.nodes[i].next)
            var bytes: (UInt64, UInt64) = (0, 0)
            for n in i..<end {
                let code = TokenTrie.byteCode(trie.nodes[n].byte)
                if code < 64 { bytes.0 |= 1 << UInt64(code) } else { bytes.1 |= 1 << UInt64(code - 64) }
            }
            let summary = trie.subtrees[i]
            #expect(summary.bytes == bytes)
            #expect(Int(summary.depth) == (i..<end).map { Int(trie.nodes[$0].depth) }.max())
            let to = end < trie.subtrees.count ? Int(trie.subtrees[end].tokensFrom) : trie.tokensInOrder.count
            let tokens = Set(trie.tokensInOrder[Int(summary.tokensFrom)..<to].map(Int.init))
            let prefix = vocabulary.pieces[trie.someToken(under: i)]!.prefix(Int(trie.nodes[i].depth))
            let expected = Set((0..<vocabulary.size).filter { vocabulary.pieces[$0]?.starts(with: prefix) == true })
            #expect(tokens == expected)
        }
    }
}

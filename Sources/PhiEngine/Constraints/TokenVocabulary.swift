import Synchronization

/// A tokenizer's pieces as bytes, ready for the matcher: a trie of every text token, and
/// the split llguidance calls a slice — the tokens that are whole characters of a JSON
/// string's body (no quote, backslash or control character), allowed all at once wherever
/// the grammar loops over those characters, and a trie of the others, the only ones such a
/// state still has to walk.
///
/// The slice is also grouped by characters (`stringBodyByCharacters`), for strings of bounded
/// length.
///
/// Built once per tokenizer and shared by every sequence (immutable). The engine knows
/// nothing of tokenizers: the caller gives each token's bytes (byte-level BPE pieces mapped
/// back to bytes, SentencePiece's ▁ as a space and `<0xNN>` as the byte) and the ids never
/// generated as text (special tokens, end tokens), which are left out.
public final class TokenVocabulary: Sendable {
    public let size: Int
    let pieces: [[UInt8]?]
    let all: TokenTrie
    /// The tokenizer's own encoding of a text (no special tokens added), when the caller
    /// gives it: the matcher feeds text the grammar forces as the tokens it encodes to.
    let encode: (@Sendable (String) -> [Int])?
    /// The tokens outside the string-body slice.
    let outsideStringBody: TokenTrie
    /// The slice's tokens by how many characters they are (`all`: the whole slice).
    let stringBodyByCharacters: LengthSlice
    /// The bytes some token is exactly (byte-level BPE has all 256, SentencePiece with byte
    /// fallback too): what the budget's lengths count in (`CompletionLengths`).
    let oneByteTokens: ByteSet

    /// The walks along byte runs, per run shape, shared by every matcher of the vocabulary.
    private let byteRunSkeletons = Mutex<[ByteRunShape: ByteRunSkeleton]>([:])
    /// The most skeletons kept (each vocabulary/8 bytes and a list of nodes).
    static let keptSkeletons = 64

    /// The characters of the slice: every scalar but `"`, `\` and the controls below U+0020.
    static let stringBodyCharacters = ScalarSet([0x20...0x21, 0x23...0x5B, 0x5D...ScalarSet.maxScalar])

    /// `pieces[id]` is token id's bytes; nil (or empty) for tokens that never appear as
    /// text. Tokens in `special` are left out too. `encode` (optional) is the tokenizer's
    /// encoding of a text without special tokens (see `GrammarMatcher.forcedTokens`).
    public init(
        pieces: [[UInt8]?], special: Set<Int> = [], encode: (@Sendable (String) -> [Int])? = nil
    ) {
        size = pieces.count
        self.encode = encode
        var ids: [Int] = []
        var kept = [[UInt8]?](repeating: nil, count: pieces.count)
        for (id, piece) in pieces.enumerated() {
            guard let piece, !piece.isEmpty, piece.count <= Int(UInt16.max), !special.contains(id)
            else { continue }
            ids.append(id)
            kept[id] = piece
        }
        self.pieces = kept
        var oneByte = ByteSet()
        for id in ids where kept[id]!.count == 1 { oneByte.insert(kept[id]![0]) }
        oneByteTokens = oneByte
        all = TokenTrie(ids: ids, pieces: kept)
        var outside: [Int] = []
        var body: [(token: Int, length: Int)] = []
        for id in ids {
            if let characters = Self.stringBodyCharacterCount(kept[id]!) {
                body.append((id, characters))
            } else {
                outside.append(id)
            }
        }
        stringBodyByCharacters = LengthSlice(vocabularySize: pieces.count, members: body)
        outsideStringBody = TokenTrie(ids: outside, pieces: kept)
        // The run of a key off the declared ones: ~1 ms to build, so not during a mask.
        _ = skeleton(ByteRunShape.keyLoop)
    }

    /// How many characters the bytes are when they are whole UTF-8 characters, none a quote,
    /// backslash or control; nil otherwise.
    static func stringBodyCharacterCount(_ bytes: [UInt8]) -> Int? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        var count = 0
        for scalar in text.unicodeScalars {
            guard scalar.value >= 0x20 && scalar != "\"" && scalar != "\\" else { return nil }
            count += 1
        }
        return count
    }

    /// The bytes of a token that appears as text, nil for special and unknown ids.
    public func piece(_ token: Int) -> [UInt8]? {
        token >= 0 && token < size ? pieces[token] : nil
    }

    /// The walk along a run of `shape` (see `ByteRunSkeleton`), built on first use (a
    /// narrowed loop from its loop's).
    func skeleton(_ shape: ByteRunShape) -> ByteRunSkeleton {
        if let known = byteRunSkeletons.withLock({ $0[shape] }) { return known }
        // Built outside the lock: two matchers may both build it, and either copy is right.
        let built =
            if let loop = shape.narrowedLoop {
                ByteRunSkeleton(narrowing: skeleton(loop), to: shape, trie: all)
            } else {
                ByteRunSkeleton(shape: shape, trie: all, vocabularySize: size)
            }
        byteRunSkeletons.withLock { skeletons in
            if skeletons.count >= Self.keptSkeletons {
                // Forget all but the key loop, which the vocabulary built ahead.
                let keyLoop = skeletons[ByteRunShape.keyLoop]
                skeletons.removeAll()
                skeletons[ByteRunShape.keyLoop] = keyLoop
            }
            skeletons[shape] = built
        }
        return built
    }

    var maxDepth: Int { all.maxDepth }

    /// The trie's size (benchmarks).
    public var trieNodeCount: Int { all.nodes.count }
}

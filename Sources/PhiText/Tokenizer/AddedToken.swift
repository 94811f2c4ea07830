/// A token of tokenizer.json's `added_tokens`: matched in the text before the model runs, and
/// never split.
public struct AddedToken: Sendable, Equatable, Codable {
    public var id: Int
    public var content: String
    /// Special tokens are left out by `decode(…, skipSpecialTokens: true)`.
    public var special: Bool
    /// Only match when not inside a word.
    public var singleWord: Bool
    /// Also swallow the whitespace on the left / right of the match.
    public var lstrip: Bool
    public var rstrip: Bool
    /// Match against the normalized text (else against the raw input).
    public var normalized: Bool

    public init(
        id: Int, content: String, special: Bool, singleWord: Bool = false, lstrip: Bool = false,
        rstrip: Bool = false, normalized: Bool = false
    ) {
        self.id = id
        self.content = content
        self.special = special
        self.singleWord = singleWord
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.normalized = normalized
    }

    init(_ r: ComponentReader) throws(TokenizerBuildError) {
        let id = try r.int("id", default: -1)
        guard id >= 0, id < Int(BPEModel.maxID) else {
            throw .invalid(r.path + ".id", "missing, negative or too large id")
        }
        self.init(
            id: id, content: try r.string("content"),
            special: try r.bool("special", default: false),
            singleWord: try r.bool("single_word", default: false),
            lstrip: try r.bool("lstrip", default: false),
            rstrip: try r.bool("rstrip", default: false),
            normalized: try r.bool("normalized", default: true))
    }
}

/// Finds added tokens in text the way tokenizers' `AddedVocabulary::find_matches` does:
/// leftmost-longest matches, `single_word` checks, and `lstrip`/`rstrip` widening the match
/// over neighbouring whitespace.
struct AddedTokenMatcher: Sendable {
    struct Pattern: Sendable {
        var bytes: [UInt8]
        var token: AddedToken
    }

    /// Patterns by first byte, longest first.
    private let byFirstByte: [[Pattern]]
    let isEmpty: Bool

    init(_ patterns: [Pattern]) {
        var table = [[Pattern]](repeating: [], count: 256)
        for p in patterns where !p.bytes.isEmpty { table[Int(p.bytes[0])].append(p) }
        for i in table.indices { table[i].sort { $0.bytes.count > $1.bytes.count } }
        byFirstByte = table
        isEmpty = patterns.allSatisfy { $0.bytes.isEmpty }
    }

    /// A segment of the text: a matched token (`id`) or text to tokenize (`id == nil`).
    struct Segment {
        var range: Range<Int>
        var id: Int?
    }

    /// Cuts `text` into segments covering it all (ranges may overlap when a strip swallowed
    /// text a later match also claims, exactly as in tokenizers).
    func segments(_ text: UnsafeBufferPointer<UInt8>) -> [Segment] {
        guard !isEmpty, !text.isEmpty else { return [Segment(range: 0..<text.count, id: nil)] }
        var segments: [Segment] = []
        var startOffset = 0
        var i = 0
        while i < text.count {
            guard let match = longestMatch(text, at: i) else {
                i += 1
                continue
            }
            var start = i
            var stop = i + match.bytes.count
            i = stop  // the automaton resumes after the raw match, whatever strips do
            let token = match.token
            if token.singleWord {
                let startSpace = start == 0 || !Self.endsWithWord(text, start)
                let stopSpace = stop == text.count || !Self.startsWithWord(text, stop)
                if !startSpace || !stopSpace { continue }
            }
            if token.lstrip {
                start = max(Self.whitespaceRunStart(text, before: start), startOffset)
            }
            if token.rstrip { stop = Self.whitespaceRunEnd(text, from: stop) }
            if startOffset < start { segments.append(Segment(range: startOffset..<start, id: nil)) }
            segments.append(Segment(range: start..<stop, id: token.id))
            startOffset = stop
        }
        if startOffset != text.count {
            segments.append(Segment(range: startOffset..<text.count, id: nil))
        }
        return segments
    }

    private func longestMatch(_ text: UnsafeBufferPointer<UInt8>, at i: Int) -> Pattern? {
        for p in byFirstByte[Int(text[i])] where p.bytes.count <= text.count - i {
            var k = 1
            while k < p.bytes.count && text[i + k] == p.bytes[k] { k += 1 }
            if k == p.bytes.count { return p }
        }
        return nil
    }

    private static func scalarBefore(
        _ text: UnsafeBufferPointer<UInt8>, _ end: Int
    ) -> (UInt32, Int) {
        var lead = end - 1
        while lead > 0 && text[lead] & 0xC0 == 0x80 { lead -= 1 }
        return (decodeUTF8(text, at: lead).0, lead)
    }

    /// Rust regex's `\w`: Oniguruma's plus Join_Control (ZWNJ, ZWJ).
    private static func isWordScalar(_ v: UInt32) -> Bool {
        scalarIsWord(ScalarCategory.of(v)) || v == 0x200C || v == 0x200D
    }

    /// `\w$` on text[..<end]
    private static func endsWithWord(_ text: UnsafeBufferPointer<UInt8>, _ end: Int) -> Bool {
        end > 0 && isWordScalar(scalarBefore(text, end).0)
    }

    /// `^\w` on text[start...]
    private static func startsWithWord(_ text: UnsafeBufferPointer<UInt8>, _ start: Int) -> Bool {
        start < text.count && isWordScalar(decodeUTF8(text, at: start).0)
    }

    /// Start of the whitespace run that ends at `end` (`\s*$` on text[..<end]).
    private static func whitespaceRunStart(
        _ text: UnsafeBufferPointer<UInt8>, before end: Int
    ) -> Int {
        var start = end
        while start > 0 {
            let (v, lead) = scalarBefore(text, start)
            guard scalarIsWhitespace(ScalarCategory.of(v)) else { break }
            start = lead
        }
        return start
    }

    /// End of the whitespace run that starts at `start` (`^\s*` on text[start...]).
    private static func whitespaceRunEnd(_ text: UnsafeBufferPointer<UInt8>, from start: Int) -> Int
    {
        var end = start
        while end < text.count {
            let (v, length) = decodeUTF8(text, at: end)
            guard scalarIsWhitespace(ScalarCategory.of(v)) else { break }
            end += length
        }
        return end
    }
}

/// The text of a reply as it is generated: token ids in, text the user may see out — whole
/// UTF-8 characters (`StreamingDecoder`), with stop strings held back and cut
/// (`StopStringMatcher`). `run`, `chat` and apps share it, so all stop alike.
public struct ReplyText {
    private var decoder: StreamingDecoder
    private var matcher: StopStringMatcher
    /// Everything shown so far.
    public private(set) var text = ""
    /// UTF-8 bytes decoded so far, whether shown or held back.
    public private(set) var decodedByteCount = 0

    public init(tokenizer: Tokenizer, stopStrings: [String] = []) {
        decoder = StreamingDecoder(tokenizer: tokenizer)
        matcher = StopStringMatcher(stopStrings)
    }

    /// A stop string has appeared: generation should end (it is not in `text`).
    public var isStopped: Bool { matcher.isStopped }

    /// Adds a generated token; returns the text that may be shown now ("" while undecided).
    public mutating func append(_ token: Int) -> String {
        let piece = decoder.append(token)
        decodedByteCount += piece.utf8.count
        return show(piece)
    }

    /// Generation has ended: returns what was still held back (an unfinished character, text
    /// that might have begun a stop string).
    public mutating func finish() -> String {
        guard !matcher.isStopped else { return "" }
        let tail = decoder.flush()
        decodedByteCount += tail.utf8.count
        let last = show(tail)
        let held = matcher.flush()
        text += held
        return last + held
    }

    private mutating func show(_ piece: String) -> String {
        guard !piece.isEmpty else { return "" }
        let visible = matcher.append(piece)
        text += visible
        return visible
    }
}

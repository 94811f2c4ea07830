/// Stop strings (`--stop STR`): text that ends a reply wherever the tokenizer happens to split
/// it. Generated text goes through `append` piece by piece; whatever might still turn out to be
/// the start of a stop string is held back until the next piece decides, and a stop string
/// that completes is never shown — the text before it is, and generation should end.
///
/// Matching is on UTF-8 bytes: a stop string of valid UTF-8 can only begin on a character
/// boundary of valid text, so what is emitted is always whole characters.
public struct StopStringMatcher: Sendable, Equatable {
    /// The stop strings as bytes (empty ones dropped: they would stop before the first word).
    private let stops: [[UInt8]]
    /// Text held back because it is a prefix of some stop string.
    private var held: [UInt8] = []
    /// Set once a stop string has appeared; later text is ignored.
    public private(set) var isStopped = false
    /// The stop string that ended the reply (Anthropic's `stop_sequence` names it).
    public private(set) var matched: String?

    public init(_ stops: [String]) {
        self.stops = stops.filter { !$0.isEmpty }.map { Array($0.utf8) }
    }

    public var isEmpty: Bool { stops.isEmpty }

    /// Takes the next piece of generated text and returns what may be shown now: everything
    /// before a stop string (then `isStopped` is true), else everything except a tail that
    /// could begin one.
    public mutating func append(_ text: String) -> String {
        guard !isStopped else { return "" }
        guard !stops.isEmpty else { return text }
        let buffer = held + Array(text.utf8)
        if let (start, stop) = firstMatch(in: buffer) {
            isStopped = true
            matched = String(decoding: stop, as: UTF8.self)
            held = []
            return String(decoding: buffer[..<start], as: UTF8.self)
        }
        let keep = longestPartialMatch(atEndOf: buffer)
        held = Array(buffer.suffix(keep))
        return String(decoding: buffer.dropLast(keep), as: UTF8.self)
    }

    /// The text still held back once generation has ended without completing a stop string:
    /// it was not one, so it belongs to the reply.
    public mutating func flush() -> String {
        defer { held = [] }
        return isStopped ? "" : String(decoding: held, as: UTF8.self)
    }

    /// Where the earliest complete stop string in `buffer` starts, and which one it is.
    private func firstMatch(in buffer: [UInt8]) -> (Int, [UInt8])? {
        var best: Int?
        var found: [UInt8] = []
        for stop in stops where stop.count <= buffer.count {
            let last = best.map { min($0, buffer.count - stop.count) } ?? buffer.count - stop.count
            var i = 0
            while i <= last {
                if buffer[i] == stop[0] && buffer[i..<(i + stop.count)].elementsEqual(stop) {
                    best = i
                    found = stop
                    break
                }
                i += 1
            }
        }
        return best.map { ($0, found) }
    }

    /// The length of the longest tail of `buffer` that is a proper prefix of a stop string.
    private func longestPartialMatch(atEndOf buffer: [UInt8]) -> Int {
        let longest = stops.map { $0.count - 1 }.max() ?? 0
        var length = min(longest, buffer.count)
        while length > 0 {
            let tail = buffer.suffix(length)
            if stops.contains(where: { $0.count > length && $0.starts(with: tail) }) {
                return length
            }
            length -= 1
        }
        return 0
    }
}

/// Finds stop strings in generated text that arrives piece by piece. Text that could be the
/// start of a stop string is held back until the next piece shows whether it is one, so the
/// stop string (or a part of it) is never sent: "Hello\n\nUser:" with stop "\n\nUser:" sends
/// "Hello" and stops, however the tokens split it. Works on UTF-8 bytes; a stop string starts
/// on a character boundary, so every cut is one.
struct StopStringMatcher {
    private let stops: [[UInt8]]
    /// Received but not yet released.
    private var pending: [UInt8] = []
    /// The stop string that ended the text, once one did (Anthropic's `stop_sequence`).
    private(set) var matched: String?

    init(_ stops: [String]) {
        self.stops = stops.map { Array($0.utf8) }.filter { !$0.isEmpty }
    }

    /// The text that is now safe to send, and whether a stop string was found (the text
    /// then ends just before it, and nothing after it will be sent).
    mutating func append(_ piece: String) -> (text: String, stopped: Bool) {
        pending.append(contentsOf: piece.utf8)
        guard !stops.isEmpty else { return (release(pending.count), false) }
        if let (cut, stop) = firstMatch() {
            matched = String(decoding: stops[stop], as: UTF8.self)
            let text = String(decoding: pending[..<cut], as: UTF8.self)
            pending.removeAll()
            return (text, true)
        }
        return (release(pending.count - heldBackLength()), false)
    }

    /// What is still held back (the answer ended for another reason).
    mutating func flush() -> String { release(pending.count) }

    private mutating func release(_ count: Int) -> String {
        let text = String(decoding: pending[..<count], as: UTF8.self)
        pending.removeFirst(count)
        return text
    }

    /// The start of the earliest stop string in `pending`, and which one it is.
    private func firstMatch() -> (start: Int, stop: Int)? {
        var best: (start: Int, stop: Int)?
        for (index, stop) in stops.enumerated() where stop.count <= pending.count {
            var i = 0
            while i + stop.count <= pending.count, i < (best?.start ?? Int.max) {
                if pending[i] == stop[0] && pending[i..<(i + stop.count)].elementsEqual(stop) {
                    best = (i, index)
                    break
                }
                i += 1
            }
        }
        return best
    }

    /// The longest end of `pending` that is the beginning of some stop string.
    private func heldBackLength() -> Int {
        var longest = 0
        for stop in stops {
            var length = min(stop.count - 1, pending.count)
            while length > longest {
                if pending.suffix(length).elementsEqual(stop.prefix(length)) {
                    longest = length
                    break
                }
                length -= 1
            }
        }
        return longest
    }
}

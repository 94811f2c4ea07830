import Foundation
import PhiEngine
import PhiFormats
import PhiText

/// One message of a chat, and whether it was cut short (Ctrl-C, or the app stopped it).
/// A cut answer keeps exactly the text that was shown, so the next turn renders what the model
/// actually said; the mark travels in saved files as `"cut": true`, which chat templates
/// ignore.
public struct ChatEntry: Sendable, Equatable {
    public var message: ChatMessage
    public var isCut: Bool

    public init(_ message: ChatMessage, isCut: Bool = false) {
        self.message = message
        self.isCut = isCut
    }
}

/// A conversation: an optional system message, then the turns in order. This is what the
/// template renders on every turn, and what `/save` and `/load` write and read (the
/// `[{"role": …, "content": …}]` file that `tokenize --chat` and `run --chat` take).
public struct ChatHistory: Sendable, Equatable {
    public var system: String?
    public private(set) var entries: [ChatEntry] = []

    public init(system: String? = nil, entries: [ChatEntry] = []) {
        self.system = system
        self.entries = entries
    }

    /// The messages the template sees: the system message first, then the entries.
    public var messages: [ChatMessage] {
        (system.map { [ChatMessage(role: "system", content: $0)] } ?? [])
            + entries.map(\.message)
    }

    public var isEmpty: Bool { entries.isEmpty }

    public mutating func append(_ entry: ChatEntry) { entries.append(entry) }

    public mutating func append(role: String, content: String, isCut: Bool = false) {
        entries.append(ChatEntry(ChatMessage(role: role, content: content), isCut: isCut))
    }

    /// Forgets the turns (the system message stays, as after ollama's `/clear`).
    public mutating func clear() { entries.removeAll() }

    /// Removes the last entry (a user message whose answer failed).
    public mutating func removeLast() { if !entries.isEmpty { entries.removeLast() } }

    /// Drops the oldest turn to make room: the first entry and everything up to the next user
    /// message, so the conversation still starts with a user message. Returns how many
    /// messages went; 0 when only the newest user message (or nothing) is left.
    public mutating func dropOldestTurn() -> Int {
        guard let end = turnStarts.first else { return 0 }
        entries.removeFirst(end)
        return end
    }

    /// Where the conversation may start after dropping old turns: the index of every user
    /// message but the first entry. Dropping `k` turns keeps `entries[turnStarts[k - 1]...]`.
    var turnStarts: [Int] {
        entries.indices.dropFirst().filter { entries[$0].message.role == "user" }
    }

    /// Drops the fewest oldest turns for `fits` to accept the rest (the system message always
    /// stays), or all but the newest turn when nothing fits; returns how many messages went
    /// and `fits`' last answer for what is kept.
    ///
    /// Dropping one turn at a time and measuring the whole rest each time made a long
    /// `--load` quadratic (2,000 messages 14.6 s, 8,000 over two minutes): here the kept part
    /// is measured from the newest turn backwards, doubling the number of turns kept until
    /// it no longer fits, then bisecting. Every measurement is of at most twice what is
    /// finally kept (bounded by the context), so the cost is the one measurement of the
    /// whole conversation plus a few of the context's size: linear in the conversation.
    /// `fits` must be monotone: keeping fewer turns never makes the prompt longer.
    public mutating func dropOldestTurns<Measure>(
        until fits: (ChatHistory) throws -> (fits: Bool, measure: Measure)
    ) rethrows -> (dropped: Int, measure: Measure) {
        let whole = try fits(self)
        let starts = turnStarts
        guard !whole.fits, !starts.isEmpty else { return (0, whole.measure) }
        func kept(_ turns: Int) -> ChatHistory {  // the newest `turns` turns (1...starts.count)
            ChatHistory(system: system, entries: Array(entries[starts[starts.count - turns]...]))
        }
        // The most turns known to fit (0: none yet) and the fewest known not to.
        var fitting = 0
        var fittingMeasure: Measure?
        var tooMany = starts.count + 1  // the whole conversation
        var probe = 1
        while probe < tooMany {
            let result = try fits(kept(probe))
            if result.fits {
                (fitting, fittingMeasure) = (probe, result.measure)
                probe *= 2
            } else {
                tooMany = probe
                break
            }
        }
        while tooMany - fitting > 1 {
            let middle = (fitting + tooMany) / 2
            let result = try fits(kept(middle))
            if result.fits {
                (fitting, fittingMeasure) = (middle, result.measure)
            } else {
                tooMany = middle
            }
        }
        let keep = max(fitting, 1)
        let measure = try fittingMeasure ?? fits(kept(keep)).measure
        let dropped = starts[starts.count - keep]
        entries.removeFirst(dropped)
        return (dropped, measure)
    }

    // MARK: Files

    /// The conversation as a JSON array of `{"role", "content"}` objects (plus `"cut": true`
    /// on cut answers), pretty-printed.
    public func json() -> String {
        let all = (system.map { [ChatEntry(ChatMessage(role: "system", content: $0))] } ?? [])
        let objects = (all + entries).map { entry -> JSONValue in
            var fields: [(key: String, value: JSONValue)] = [
                ("role", .string(entry.message.role)),
                ("content", .string(entry.message.content)),
            ]
            if entry.isCut { fields.append(("cut", .bool(true))) }
            return .object(fields)
        }
        return JSONValue.array(objects).pythonJSONDump(indent: 2) + "\n"
    }

    /// Reads a conversation file as `tokenize --chat` does; a leading system message becomes
    /// `system`. Every message needs a string `content`.
    public static func load(from path: String) throws -> ChatHistory {
        let values = try ChatPrompt.conversation(fromFile: path)
        var history = ChatHistory()
        for (i, value) in values.enumerated() {
            guard let role = value["role"]?.stringValue, let content = value["content"]?.stringValue
            else {
                throw ChatPromptError.invalidConversation(
                    path: path, detail: "message \(i + 1) has no string 'content'")
            }
            if i == 0 && role == "system" {
                history.system = content
            } else {
                history.append(role: role, content: content, isCut: value["cut"]?.boolValue == true)
            }
        }
        return history
    }
}

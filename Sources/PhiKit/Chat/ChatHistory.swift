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
        guard entries.count > 1 else { return 0 }
        var end = 1
        while end < entries.count && entries[end].message.role != "user" { end += 1 }
        guard end < entries.count else { return 0 }  // the last turn is the one being asked
        entries.removeFirst(end)
        return end
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

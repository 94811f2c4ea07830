/// One turn of a conversation: what `run`, `tokenize --chat` and the chat templates share.
public struct ChatMessage: Sendable, Codable, Equatable {
    public var role: String
    public var content: String

    public init(role: String, content: String) {
        self.role = role
        self.content = content
    }
}

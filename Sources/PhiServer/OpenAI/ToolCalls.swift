import Foundation
import PhiFormats

/// A call the model asked for, in OpenAI's terms: `function.arguments` is a JSON string.
struct ToolCall: Sendable, Equatable {
    var id: String
    var name: String
    var arguments: String
}

/// Phi-4-mini's tool calls: `<|tool_call|>[{"name": …, "arguments": {…}}]<|/tool_call|>`
/// (an object or a list of them; `parameters` is taken for `arguments`). A block whose text is
/// not such JSON stays in the content, tags and all: nothing the model wrote is dropped.
enum ToolCallSyntax {
    static let open = "<|tool_call|>"
    static let close = "<|/tool_call|>"

    /// A call of `name` up to its arguments, written as `PromptBuilder` writes earlier calls
    /// back into a conversation. It stops before the space after the colon: the tokenizer
    /// merges that space with what follows (` {"`), and a lone space token would be one the
    /// model never saw there.
    static func start(calling name: String) -> String {
        open + "[{\"name\": " + JSONValue.string(name).pythonDumps() + ", \"arguments\":"
    }

    /// Splits a whole answer into its content (nil when only whitespace is left) and calls;
    /// with `parallel` false only the first call is kept (OpenAI's `parallel_tool_calls`: the
    /// model cannot be kept from writing more, so the client is not shown them).
    static func parse(_ text: String, parallel: Bool = true, makeID: () -> String)
        -> (content: String?, calls: [ToolCall])
    {
        var content = ""
        var calls: [ToolCall] = []
        var rest = Substring(text)
        while let start = rest.range(of: open) {
            content += rest[..<start.lowerBound]
            let body = rest[start.upperBound...]
            let end = body.range(of: close)
            let json = end.map { body[..<$0.lowerBound] } ?? body
            if let parsed = self.calls(in: String(json), makeID: makeID) {
                calls += parsed
            } else {
                content += rest[start.lowerBound..<(end?.upperBound ?? rest.endIndex)]
            }
            rest = end.map { body[$0.upperBound...] } ?? body[body.endIndex...]
        }
        content += rest
        if !parallel { calls = Array(calls.prefix(1)) }
        let trimmed = content.trimmingWhitespace()
        if calls.isEmpty { return (content, []) }
        return (trimmed.isEmpty ? nil : trimmed, calls)
    }

    private static func calls(in json: String, makeID: () -> String) -> [ToolCall]? {
        guard let value = try? JSONValue(parsing: Array(json.utf8)) else { return nil }
        let items = value.arrayValue ?? [value]
        var calls: [ToolCall] = []
        for item in items {
            guard let name = item["name"]?.stringValue, !name.isEmpty else { return nil }
            let arguments: String
            switch item["arguments"] ?? item["parameters"] ?? .object([]) {
            case .string(let text): arguments = text
            case .object(let members): arguments = JSONValue.object(members).serialized()
            default: return nil
            }
            calls.append(ToolCall(id: makeID(), name: name, arguments: arguments))
        }
        return calls.isEmpty ? nil : calls
    }
}

/// Streams content while holding back everything from the first `<|tool_call|>` on (and a
/// partial tag at the end), so that calls can be parsed once the answer is complete.
struct ToolCallStream {
    private var held = ""
    private var inCall = false

    /// The content that can be sent now.
    mutating func append(_ text: String) -> String {
        held += text
        if inCall { return "" }
        if let start = held.range(of: ToolCallSyntax.open) {
            inCall = true
            let before = String(held[..<start.lowerBound])
            held = String(held[start.lowerBound...])
            return before
        }
        let keep = Self.partialTagLength(at: held)
        let ready = String(held.utf8.dropLast(keep))!
        held = String(held.utf8.suffix(keep))!
        return ready
    }

    /// The held text, split into content and calls.
    mutating func finish(parallel: Bool = true, makeID: () -> String)
        -> (content: String?, calls: [ToolCall])
    {
        defer { held = "" }
        if !inCall { return (held.isEmpty ? nil : held, []) }
        let (content, calls) = ToolCallSyntax.parse(held, parallel: parallel, makeID: makeID)
        return (calls.isEmpty ? held : content, calls)
    }

    /// How many bytes at the end of `text` could begin the opening tag.
    private static func partialTagLength(at text: String) -> Int {
        let tag = Array(ToolCallSyntax.open.utf8)
        let bytes = Array(text.utf8)
        var length = min(tag.count - 1, bytes.count)
        while length > 0 {
            if bytes.suffix(length).elementsEqual(tag.prefix(length)) { return length }
            length -= 1
        }
        return 0
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
            let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        var result = ""
        result.unicodeScalars.append(contentsOf: scalars[first...last])
        return result
    }
}

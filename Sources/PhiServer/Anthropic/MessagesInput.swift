import PhiFormats

/// `messages` of a Messages request as chat messages. A user turn's `tool_result` blocks
/// become `tool` messages (before the turn's text, as Anthropic puts results first); an
/// assistant turn's `tool_use` blocks become its `tool_calls` (arguments: the `input` object
/// as JSON). Every result must answer a `tool_use` id that came before it. `thinking` and
/// `redacted_thinking` blocks are skipped; images, documents and server-tool blocks are
/// refused (the model reads text).
enum MessagesInput {
    static func messages(_ f: RequestFields, contextSize: Int) throws(APIError) -> [JSONValue] {
        guard let turns = try f.array("messages"), !turns.isEmpty else {
            throw .invalidRequest("'messages' must be a non-empty list of messages", param: "messages")
        }
        guard turns.count <= contextSize else {
            throw .invalidRequest(
                "'messages' has \(turns.count) messages: a context of \(contextSize) tokens "
                    + "cannot hold them", param: "messages")
        }
        var result: [JSONValue] = []
        var toolUseIDs: Set<String> = []
        for m in try RequestFields.objects(turns, in: "messages") {
            let param = m.path
            let role = try m.string("role")
            guard role == "user" || role == "assistant" else {
                throw .invalidRequest(
                    "'\(param).role' must be \"user\" or \"assistant\" (the system prompt goes "
                        + "in 'system')", param: param)
            }
            guard let content = m.value("content") else {
                throw .invalidRequest("'\(param).content' is missing", param: param)
            }
            if let text = content.stringValue {
                result.append(.object([("role", .string(role!)), ("content", .string(text))]))
                continue
            }
            guard let blocks = content.arrayValue else {
                throw .invalidType("\(param).content", expected: "a string or a list of content blocks")
            }
            var text = ""
            var calls: [JSONValue] = []
            var results: [JSONValue] = []
            for (j, block) in blocks.enumerated() {
                let name = "\(param).content[\(j)]"
                let b = RequestFields(block, path: name)
                let type = try b.string("type")
                switch (type, role) {
                case ("text", _):
                    guard let piece = try b.string("text") else {
                        throw .invalidRequest("'\(name).text' is missing", param: name)
                    }
                    text += piece
                case ("tool_use", "assistant"):
                    let call = try toolUse(b)
                    guard toolUseIDs.insert(call.id).inserted else {
                        throw .invalidRequest(
                            "'\(name).id' \"\(call.id)\" is used by an earlier tool_use", param: name)
                    }
                    calls += ResponseBodies.toolCalls([call]).arrayValue!
                case ("tool_result", "user"):
                    guard let id = try b.string("tool_use_id") else {
                        throw .invalidRequest("'\(name).tool_use_id' is missing", param: name)
                    }
                    guard toolUseIDs.contains(id) else {
                        throw .invalidRequest(
                            "'\(name)' answers tool_use_id \"\(id)\", but no tool_use before it "
                                + "has that id", param: name)
                    }
                    let output = try b.value("content").map { v throws(APIError) in
                        try v.joinedText(b.name("content"), partTypes: ["text"])
                    } ?? ""
                    results.append(
                        .object([
                            ("role", .string("tool")), ("tool_call_id", .string(id)),
                            ("content", .string(output)),
                        ]))
                case ("thinking", "assistant"), ("redacted_thinking", "assistant"):
                    continue
                default:
                    throw .invalidRequest(
                        "'\(name)' is a \(type.map { "\"\($0)\"" } ?? "untyped") block in a "
                            + "\(role!) message: this server takes text, tool_use (assistant) "
                            + "and tool_result (user) blocks", param: name)
                }
            }
            result += results
            if role == "assistant" {
                var message: [(key: String, value: JSONValue)] = [
                    ("role", .string("assistant")), ("content", .string(text)),
                ]
                if !calls.isEmpty { message.append(("tool_calls", .array(calls))) }
                result.append(.object(message))
            } else if !text.isEmpty || results.isEmpty {
                result.append(.object([("role", .string("user")), ("content", .string(text))]))
            }
        }
        return result
    }

    /// A replayed `tool_use`: `id`, `name`, and `input`, which must be an object.
    private static func toolUse(_ b: RequestFields) throws(APIError) -> ToolCall {
        guard let id = try b.string("id"), let name = try b.string("name") else {
            throw .invalidRequest("'\(b.path)' needs 'id' and 'name'", param: b.path)
        }
        let input = b.value("input") ?? .object([])
        guard input.objectValue != nil else {
            throw .invalidType(b.name("input"), expected: "an object (the tool's arguments)")
        }
        return ToolCall(id: id, name: name, arguments: input.serialized())
    }
}

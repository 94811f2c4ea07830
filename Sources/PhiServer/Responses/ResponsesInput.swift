import PhiFormats

/// `input` of a Responses request as chat messages: a string is one user message; items are
/// messages (`{"role", "content"}` with text parts `input_text` / `output_text`),
/// `function_call`s (joined to the assistant message before them, as chat completions'
/// `tool_calls`) and `function_call_output`s (`tool` messages), in order. Reasoning items a
/// client replays are skipped (this model produces none); references to stored items are
/// refused (nothing is stored).
enum ResponsesInput {
    static func messages(_ f: RequestFields, contextSize: Int)
        throws(APIError) -> [JSONValue]
    {
        guard let input = f.value("input") else {
            throw .invalidRequest("'input' is missing", param: "input")
        }
        if let text = input.stringValue {
            return [.object([("role", .string("user")), ("content", .string(text))])]
        }
        guard let items = input.arrayValue, !items.isEmpty else {
            throw .invalidType("input", expected: "a string or a non-empty list of items")
        }
        // Every item takes at least one token of the context: more cannot fit, and are
        // refused before any of them is rendered.
        guard items.count <= contextSize else {
            throw .invalidRequest(
                "'input' has \(items.count) items: a context of \(contextSize) tokens cannot "
                    + "hold them", param: "input", code: "context_length_exceeded")
        }
        var messages: [JSONValue] = []
        var calledIDs: Set<String> = []
        for fields in try RequestFields.objects(items, in: "input") {
            let param = fields.path
            let type = try fields.string("type") ?? (fields.object["role"] != nil ? "message" : nil)
            switch type {
            case "message":
                messages.append(try message(fields))
            case "function_call":
                let call = try functionCall(fields)
                guard calledIDs.insert(call.id).inserted else {
                    throw .invalidRequest(
                        "'\(param).call_id' \"\(call.id)\" is used by an earlier function_call",
                        param: param, code: "invalid_value")
                }
                appendCall(call, to: &messages)
            case "function_call_output":
                guard let id = try fields.string("call_id") else {
                    throw .invalidRequest("'\(param).call_id' is missing", param: param)
                }
                guard calledIDs.contains(id) else {
                    throw .invalidRequest(
                        "'\(param)' is the output of call_id \"\(id)\", but no function_call "
                            + "before it has that id", param: param, code: "invalid_value")
                }
                messages.append(
                    .object([
                        ("role", .string("tool")), ("tool_call_id", .string(id)),
                        ("content", .string(try output(fields))),
                    ]))
            case "reasoning":
                continue
            case "item_reference":
                throw .invalidRequest(
                    "'\(param)' is an item_reference: this server is stateless and keeps no "
                        + "items; send the item itself", param: param, code: "unsupported_value")
            case let other:
                throw .invalidRequest(
                    "'\(param)' has type \(other.map { "\"\($0)\"" } ?? "null"): input items "
                        + "can be messages, function_call and function_call_output",
                    param: param, code: "unsupported_value")
            }
        }
        return messages
    }

    /// A message item: role user, assistant, system or developer (a system message to the
    /// template), content a string or text parts.
    private static func message(_ f: RequestFields) throws(APIError) -> JSONValue {
        guard let role = try f.string("role") else {
            throw .invalidRequest("'\(f.name("role"))' is missing", param: f.path)
        }
        guard ["user", "assistant", "system", "developer"].contains(role) else {
            throw .invalidRequest(
                "'\(f.name("role"))' must be \"user\", \"assistant\", \"system\" or "
                    + "\"developer\", not \"\(role)\"", param: f.path, code: "invalid_value")
        }
        let content = try text(f.value("content"), f.name("content"))
        return .object([
            ("role", .string(role == "developer" ? "system" : role)), ("content", .string(content)),
        ])
    }

    /// A replayed call: its arguments must be JSON (the model wrote JSON; anything else was
    /// altered on the way and would teach the model a syntax it does not use).
    private static func functionCall(_ f: RequestFields) throws(APIError)
        -> ToolCall
    {
        guard let id = try f.string("call_id"), let name = try f.string("name") else {
            throw .invalidRequest(
                "'\(f.path)' needs 'call_id' and 'name'", param: f.path)
        }
        let arguments = try f.string("arguments") ?? "{}"
        guard (try? JSONValue(parsing: Array(arguments.utf8))) != nil else {
            throw .invalidRequest(
                "'\(f.name("arguments"))' is not valid JSON: \(arguments.prefix(80))",
                param: f.name("arguments"), code: "invalid_value")
        }
        let flat = ResponsesTools.flatName(name, namespace: try f.string("namespace"))
        return ToolCall(id: id, name: flat, arguments: arguments)
    }

    /// Joins a call to the assistant message just before it (the text the model wrote
    /// before calling), or starts an assistant message of its own.
    private static func appendCall(_ call: ToolCall, to messages: inout [JSONValue]) {
        let entry = ResponseBodies.toolCalls([call]).arrayValue![0]
        if var last = messages.last, last["role"]?.stringValue == "assistant" {
            last.set("tool_calls", .array((last["tool_calls"]?.arrayValue ?? []) + [entry]))
            messages[messages.count - 1] = last
        } else {
            messages.append(
                .object([
                    ("role", .string("assistant")), ("content", .string("")),
                    ("tool_calls", .array([entry])),
                ]))
        }
    }

    /// A call's output: a string, or text parts.
    private static func output(_ f: RequestFields) throws(APIError) -> String {
        try text(f.value("output"), f.name("output"))
    }

    /// A string, or `input_text` / `output_text` parts joined.
    private static func text(_ content: JSONValue?, _ name: String) throws(APIError) -> String {
        guard let content else { throw .invalidRequest("'\(name)' is missing", param: name) }
        return try content.joinedText(name, partTypes: ["input_text", "output_text"])
    }
}

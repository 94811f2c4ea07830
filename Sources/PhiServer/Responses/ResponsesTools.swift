import PhiFormats

/// The `tools` of a Responses request as the model is offered them: function tools
/// (`{"type": "function", "name", "description", "parameters", "strict"}`) become chat
/// completions' `{"type": "function", "function": {…}}`; a namespace group (Codex wraps each
/// MCP server's tools in `{"type": "namespace", "name": "mcp__docs", "tools": […]}`) is
/// flattened to `<namespace>__<name>` functions, and calls of those are given back with
/// separate `namespace` and `name`, as the Responses API writes them. Hosted tools
/// (web_search, file_search, custom…) are refused: this server cannot run them, and a tool
/// silently left out is a tool the agent believes the model has.
struct ResponsesTools {
    /// In chat completions' form, for the chat template.
    private(set) var chatTools: [JSONValue] = []
    /// Flattened name → the namespace and the name inside it.
    private var namespaced: [String: (namespace: String, name: String)] = [:]

    init(_ f: RequestFields) throws(APIError) {
        for (i, tool) in (try f.array("tools") ?? []).enumerated() {
            let param = "tools[\(i)]"
            switch tool["type"]?.stringValue {
            case "function":
                try add(tool, param: param, namespace: nil)
            case "namespace":
                guard let group = tool["name"]?.stringValue, !group.isEmpty,
                    let members = tool["tools"]?.arrayValue
                else {
                    throw .invalidRequest(
                        "'\(param)' must be {\"type\": \"namespace\", \"name\": …, \"tools\": […]}",
                        param: param)
                }
                for (j, member) in members.enumerated() {
                    guard member["type"]?.stringValue == "function" else {
                        throw .invalidRequest(
                            "'\(param).tools[\(j)]' must be a function tool", param: param,
                            code: "unsupported_value")
                    }
                    try add(member, param: "\(param).tools[\(j)]", namespace: group)
                }
            case let type:
                throw .invalidRequest(
                    "'\(param)' has type \(type.map { "\"\($0)\"" } ?? "null"): this server "
                        + "runs no hosted tools and offers the model function tools only "
                        + "(\"function\", or a \"namespace\" of them)",
                    param: param, code: "unsupported_value")
            }
        }
    }

    private mutating func add(_ tool: JSONValue, param: String, namespace: String?) throws(APIError) {
        guard let name = tool["name"]?.stringValue, !name.isEmpty else {
            throw .invalidRequest("'\(param).name' is missing", param: param)
        }
        if let parameters = tool["parameters"], !parameters.isNull, parameters.objectValue == nil {
            throw .invalidType("\(param).parameters", expected: "a JSON schema object")
        }
        let flat = namespace.map { "\($0)__\(name)" } ?? name
        guard !chatTools.contains(where: { $0["function"]?["name"]?.stringValue == flat }) else {
            throw .invalidRequest("'\(param)': two tools are named '\(flat)'", param: param)
        }
        if let namespace { namespaced[flat] = (namespace, name) }
        var function: [(key: String, value: JSONValue)] = [("name", .string(flat))]
        for key in ["description", "parameters"] {
            if let value = tool[key], !value.isNull { function.append((key, value)) }
        }
        chatTools.append(.object([("type", .string("function")), ("function", .object(function))]))
    }

    func has(_ flatName: String) -> Bool {
        chatTools.contains { $0["function"]?["name"]?.stringValue == flatName }
    }

    /// The name the model knows a call by: `name`, or `namespace__name`.
    static func flatName(_ name: String, namespace: String?) -> String {
        namespace.map { "\($0)__\(name)" } ?? name
    }

    /// A call's `name` and `namespace` members in the Responses API's form.
    func nameMembers(of call: ToolCall) -> [(key: String, value: JSONValue)] {
        if let (namespace, name) = namespaced[call.name] {
            return [("name", .string(name)), ("namespace", .string(namespace))]
        }
        return [("name", .string(call.name))]
    }

    /// `tool_choice`: "none", "auto", "required", or `{"type": "function", "name": …}`
    /// naming one of the tools; "none" without tools, "auto" with, as OpenAI.
    func choice(_ f: RequestFields) throws(APIError) -> CompletionRequest.ToolChoice {
        let param = "tool_choice"
        guard let value = f.value(param) else { return chatTools.isEmpty ? .none : .auto }
        let shape = "\"none\", \"auto\", \"required\" or {\"type\": \"function\", \"name\": …}"
        let choice: CompletionRequest.ToolChoice
        switch (value.stringValue, value["type"]?.stringValue) {
        case ("none", _): return .none
        case ("auto", _): return chatTools.isEmpty ? .none : .auto
        case ("required", _): choice = .required
        case (nil, "function"):
            guard let name = value["name"]?.stringValue else { throw .invalidType(param, expected: shape) }
            let flat = Self.flatName(name, namespace: value["namespace"]?.stringValue)
            guard has(flat) else {
                throw .invalidRequest(
                    "'tool_choice' names the function '\(flat)', which is not in 'tools'",
                    param: param, code: "invalid_value")
            }
            choice = .function(flat)
        default:
            throw .invalidRequest("'tool_choice' must be \(shape)", param: param, code: "invalid_value")
        }
        if chatTools.isEmpty {
            throw .invalidRequest("'tool_choice' \"required\" needs 'tools'", param: param,
                code: "invalid_value")
        }
        return choice
    }
}

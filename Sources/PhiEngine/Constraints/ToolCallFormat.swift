import PhiFormats

/// The tool calls a chat template's syntax allows after its opening tag, for `tool_choice`
/// "required" or a named function: a call `{"name": …, "arguments": …}` (or a list of them)
/// whose name is one of the tools' and whose arguments follow that tool's `parameters`
/// schema, then the closing tag; nothing may follow. Phi-4-mini writes
/// `<|tool_call|>[{"name": "f", "arguments": {…}}]<|/tool_call|>`.
///
/// The text before it is not part of it: the front end feeds it after the prompt — the
/// opening tag as the model's own token (a grammar over text would also let the model spell
/// it in pieces) and, for a named function, the call up to its arguments, as one block.
public struct ToolCallFormat: Sendable, Equatable {
    public struct Tool: Sendable, Equatable {
        public var name: String
        /// The JSON schema of the arguments; nil: the function takes none (`{}`), as OpenAI
        /// reads a function without `parameters`.
        public var parameters: JSONValue?

        public init(name: String, parameters: JSONValue?) {
            self.name = name
            self.parameters = parameters
        }
    }

    /// Where the text the grammar matches starts.
    public enum Start: Sendable, Equatable {
        /// After the opening tag: one call of any of the tools, or a list of calls.
        case calls
        /// After `[{"name": "<name>", "arguments":` of the only tool: its arguments, then `}]`.
        case arguments
    }

    public var tools: [Tool]
    /// The text that ends the calls (`<|/tool_call|>`).
    public var close: String
    /// Several calls in one list (OpenAI's `parallel_tool_calls`), or exactly one.
    public var allowsSeveral: Bool
    public var start: Start

    public init(tools: [Tool], close: String, allowsSeveral: Bool, start: Start = .calls) {
        self.tools = tools
        self.close = close
        self.allowsSeveral = allowsSeveral
        self.start = start
    }

    /// One space at most at each separator: the models write calls as Python's `json.dumps`
    /// does (`", "`, `": "`), and a compact call is allowed too.
    public static let maxWhitespace = 1

    /// The grammar of the calls and the closing tag. A tool whose `parameters` phikit cannot
    /// enforce is a `ConstraintError` naming the keyword; its path starts
    /// `#/$defs/<tool name>`.
    public func compile() throws(ConstraintError) -> Grammar {
        guard !tools.isEmpty else { throw ConstraintError("a forced tool call needs at least one tool") }
        switch start {
        case .calls:
            return try JSONSchemaCompiler.grammar(
                schema, maxWhitespace: Self.maxWhitespace, closing: [close])
        case .arguments:
            guard tools.count == 1 else {
                throw ConstraintError("a named tool call continues the call of one tool")
            }
            return try JSONSchemaCompiler.grammar(
                Self.arguments(tools[0]), maxWhitespace: Self.maxWhitespace,
                closing: ["}", "]", close])
        }
    }

    /// The schema of a named call's arguments alone: its tool's, at the same path as in
    /// `schema` (so errors name the same places).
    static func arguments(_ tool: Tool) -> JSONValue {
        .object([
            ("$defs", .object([(tool.name, parameters(tool))])),
            ("$ref", .string(definition(tool))),
        ])
    }

    /// Where a tool's parameters live in the combined schema: `#/$defs/<name>`.
    static func definition(_ tool: Tool) -> String {
        "#/$defs/" + JSONSchemaCompiler.escape(tool.name)
    }

    /// A tool's parameters with their own `#…` references moved to where they now live; a
    /// tool without them takes `{}` only.
    static func parameters(_ tool: Tool) -> JSONValue {
        guard let parameters = tool.parameters else {
            return .object([
                ("type", .string("object")), ("properties", .object([])),
                ("additionalProperties", .bool(false)),
            ])
        }
        return moveReferences(parameters, under: definition(tool))
    }

    /// The calls as one JSON schema: each tool's parameters under `$defs` by the tool's name,
    /// a call of each tool, one call or a list.
    var schema: JSONValue {
        var definitions: [(key: String, value: JSONValue)] = []
        var calls: [JSONValue] = []
        for tool in tools {
            definitions.append((tool.name, Self.parameters(tool)))
            calls.append(
                .object([
                    ("type", .string("object")),
                    (
                        "properties",
                        .object([
                            ("name", .object([("const", .string(tool.name))])),
                            ("arguments", .object([("$ref", .string(Self.definition(tool)))])),
                        ])
                    ),
                    ("required", .array([.string("name"), .string("arguments")])),
                    ("additionalProperties", .bool(false)),
                ]))
        }
        let call: JSONValue = calls.count == 1 ? calls[0] : .object([("anyOf", .array(calls))])
        var list: [(key: String, value: JSONValue)] = [
            ("type", .string("array")), ("items", call), ("minItems", .number("1")),
        ]
        if !allowsSeveral { list.append(("maxItems", .number("1"))) }
        return .object([
            ("$defs", .object(definitions)),
            ("anyOf", .array([call, .object(list)])),
        ])
    }

    /// The schema with its local references (`#`, `#/…`) pointing under `base`, where it now
    /// lives. Values (`const`, `enum`, `default`, `examples`) are data, left as they are.
    static func moveReferences(_ schema: JSONValue, under base: String) -> JSONValue {
        switch schema {
        case .object(let members):
            return .object(
                members.map { member in
                    if member.key == "$ref", let target = member.value.stringValue, target.hasPrefix("#") {
                        return (member.key, .string(base + target.dropFirst()))
                    }
                    if ["const", "enum", "default", "examples"].contains(member.key) { return member }
                    return (member.key, moveReferences(member.value, under: base))
                })
        case .array(let items):
            return .array(items.map { moveReferences($0, under: base) })
        default:
            return schema
        }
    }
}

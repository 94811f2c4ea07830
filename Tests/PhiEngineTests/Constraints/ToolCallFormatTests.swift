import PhiFormats
import Testing

@testable import PhiEngine

/// Forced tool calls (`tool_choice` "required" or a named function) as a grammar: the
/// model's call syntax after its opening tag, arguments valid against each tool's
/// `parameters`, then the closing tag and nothing more.
@Suite("tool call format")
struct ToolCallFormatTests {
    static let weather = ToolCallFormat.Tool(
        name: "get_weather",
        parameters: try! JSONValue(parsing: Array(#"""
            {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20},
             "unit": {"$ref": "#/$defs/unit"}}, "required": ["city"],
             "additionalProperties": false,
             "$defs": {"unit": {"enum": ["c", "f"]}}}
            """#.utf8)))
    static let time = ToolCallFormat.Tool(name: "get_time", parameters: nil)

    func matcher(_ format: ToolCallFormat) throws -> GrammarMatcher {
        GrammarMatcher(grammar: try format.compile(), vocabulary: ConstraintCompileTests.bytesVocabulary)
    }

    @Test("required: one call of any tool or a list of calls, as json.dumps or compact, then the tag")
    func required() throws {
        let m = try matcher(
            ToolCallFormat(tools: [Self.weather, Self.time], close: "<|/tool_call|>", allowsSeveral: true))
        for ok in [
            #"[{"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}]<|/tool_call|>"#,
            #"{"name":"get_weather","arguments":{"city":"Oslo"}}<|/tool_call|>"#,
            #"[{"name": "get_time", "arguments": {}}, {"name": "get_weather", "arguments": {"city": "Rome"}}]<|/tool_call|>"#,
        ] {
            #expect(m.accepts(Array(ok.utf8)), "\(ok)")
        }
        for bad in [
            #"[{"name": "get_weather", "arguments": {"city": "Paris"}}]"#,  // no closing tag
            #"[{"name": "get_weather", "arguments": {"unit": "c"}}]<|/tool_call|>"#,  // city missing
            #"[{"name": "get_weather", "arguments": {"city": "Paris", "unit": "k"}}]<|/tool_call|>"#,
            #"[{"name": "get_time", "arguments": {"x": 1}}]<|/tool_call|>"#,  // takes no arguments
            #"[{"name": "get_date", "arguments": {}}]<|/tool_call|>"#,  // no such tool
            #"[]<|/tool_call|>"#,
            #"[{"name":  "get_time", "arguments": {}}]<|/tool_call|>"#,  // two spaces: bounded
            #"[{"name": "get_time", "arguments": {}}]<|/tool_call|> more"#,
        ] {
            #expect(!m.accepts(Array(bad.utf8)), "\(bad)")
        }
        let one = try matcher(
            ToolCallFormat(tools: [Self.weather, Self.time], close: "<|/tool_call|>", allowsSeveral: false))
        #expect(!one.accepts(Array(#"[{"name": "get_time", "arguments": {}}, {"name": "get_time", "arguments": {}}]<|/tool_call|>"#.utf8)))
        #expect(one.accepts(Array(#"[{"name": "get_time", "arguments": {}}]<|/tool_call|>"#.utf8)))
    }

    @Test("a named function: its arguments after the fed start, then the rest of the call; complete at the tag")
    func named() throws {
        let m = try matcher(
            ToolCallFormat(tools: [Self.weather], close: "<|/tool_call|>", allowsSeveral: true, start: .arguments))
        #expect(m.accepts(Array(#" {"city": "Paris"}}]<|/tool_call|>"#.utf8)))
        #expect(m.accepts(Array(#"{"city":"Paris","unit":"f"}}]<|/tool_call|>"#.utf8)))
        #expect(!m.accepts(Array(#" {"city": "Paris"}}, {"name": "get_weather"}]<|/tool_call|>"#.utf8)))
        #expect(!m.accepts(Array(#" {}}]<|/tool_call|>"#.utf8)))
        #expect(m.advance(bytes: Array(#" {"city": "P"}}]<|/tool_call|>"#.utf8)))
        #expect(m.isComplete)
    }

    @Test("a tool's parameters the engine cannot enforce are refused naming the keyword and the tool")
    func refused() throws {
        let bad = ToolCallFormat.Tool(
            name: "f", parameters: .object([("type", .string("object")), ("minProperties", .number("1"))]))
        do {
            _ = try ToolCallFormat(tools: [Self.time, bad], close: "</c>", allowsSeveral: true).compile()
            Issue.record("minProperties was accepted")
        } catch {
            #expect(error.unsupported == "minProperties" && error.message.contains("#/$defs/f"), "\(error.message)")
        }
        #expect(throws: ConstraintError.self) {
            try ToolCallFormat(tools: [], close: "</c>", allowsSeveral: true).compile()
        }
    }

    @Test("references move with the parameters; values that look like references do not")
    func movedReferences() {
        let schema = try! JSONValue(parsing: Array(##"{"$ref": "#/$defs/a", "const": {"$ref": "#x"}, "items": [{"$ref": "#"}]}"##.utf8))
        let moved = ToolCallFormat.moveReferences(schema, under: "#/$defs/t")
        #expect(moved["$ref"]?.stringValue == "#/$defs/t/$defs/a")
        #expect(moved["const"]?["$ref"]?.stringValue == "#x")
        #expect(moved["items"]?.arrayValue?.first?["$ref"]?.stringValue == "#/$defs/t")
    }
}

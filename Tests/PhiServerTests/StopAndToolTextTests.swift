import PhiText
import Testing

@testable import PhiServer

/// The text-level pieces of an answer: stop strings across piece boundaries and Phi-4-mini's
/// tool-call blocks.
@Suite("stop strings and tool-call text")
struct StopAndToolTextTests {
    /// Feeds `pieces` to the matcher the server's answers go through (PhiText's, as run's
    /// and chat's); returns what was released and whether it stopped.
    static func run(_ stops: [String], _ pieces: [String]) -> (String, Bool) {
        var matcher = StopStringMatcher(stops)
        var out = ""
        for piece in pieces {
            out += matcher.append(piece)
            if matcher.isStopped { return (out, true) }
        }
        return (out + matcher.flush(), false)
    }

    @Test func stopStringSplitOverPieces() {
        #expect(Self.run(["\n\nUser:"], ["Hello", "\n", "\nUs", "er:", " more"]) == ("Hello", true))
        #expect(Self.run(["END"], ["abc E", "N", "D tail"]) == ("abc ", true))
        #expect(Self.run(["xyz"], ["abc", "xy"]) == ("abcxy", false))  // held, then released
        #expect(Self.run(["b", "abc"], ["ab"]) == ("a", true))  // the earliest match wins
        #expect(Self.run([], ["a", "b"]) == ("ab", false))
        #expect(Self.run(["é!"], ["caf", "é", "!"]) == ("caf", true))
    }

    @Test func heldTextIsReleasedAsSoonAsItCannotBeAStop() {
        var matcher = StopStringMatcher(["STOP"])
        #expect(matcher.append("a S") == "a ")
        #expect(matcher.append("T") == "")
        #expect(matcher.append("x") == "STx")
    }

    static func ids() -> () -> String {
        var n = 0
        return {
            n += 1
            return "call_\(n)"
        }
    }

    @Test func toolCallsParsed() {
        let text =
            #"<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}}]<|/tool_call|>"#
        let (content, calls) = ToolCallSyntax.parse(text, makeID: Self.ids())
        #expect(content == nil)
        #expect(calls == [ToolCall(id: "call_1", name: "get_weather", arguments: #"{"city":"Paris"}"#)])

        let two = #"Sure. <|tool_call|>{"name": "a", "parameters": {}}<|/tool_call|>"#
            + #"<|tool_call|>{"name": "b", "arguments": "{\"x\": 1}"}<|/tool_call|>"#
        let (text2, calls2) = ToolCallSyntax.parse(two, makeID: Self.ids())
        #expect(text2 == "Sure.")
        #expect(calls2.map(\.name) == ["a", "b"])
        #expect(calls2.map(\.arguments) == ["{}", #"{"x": 1}"#])

        // parallel_tool_calls false: the first call only, from the answer and from a stream.
        let (_, first) = ToolCallSyntax.parse(two, parallel: false, makeID: Self.ids())
        #expect(first.map(\.name) == ["a"])
        var stream = ToolCallStream()
        #expect(stream.append(two) == "Sure. ")
        #expect(stream.finish(parallel: false, makeID: Self.ids()).calls.map(\.name) == ["a"])
    }

    @Test func invalidToolCallTextStaysContent() {
        for text in [
            "<|tool_call|>not json<|/tool_call|>", #"<|tool_call|>{"arguments": {}}<|/tool_call|>"#,
            "<|tool_call|>[]", "plain text",
        ] {
            let (content, calls) = ToolCallSyntax.parse(text, makeID: Self.ids())
            #expect(calls.isEmpty)
            #expect(content == text)
        }
        // An unfinished block (the answer ended first) still counts when its JSON is whole.
        let (_, calls) = ToolCallSyntax.parse(#"<|tool_call|>{"name": "f"}"#, makeID: Self.ids())
        #expect(calls.map(\.name) == ["f"])
    }

    @Test func streamHoldsFromTheTagOn() {
        var stream = ToolCallStream()
        #expect(stream.append("Let me check <|to") == "Let me check ")
        #expect(stream.append("ol_call|>{\"name\": ") == "")
        #expect(stream.append("\"f\"}<|/tool_call|>") == "")
        let (content, calls) = stream.finish(makeID: Self.ids())
        #expect(content == nil && calls.map(\.name) == ["f"])

        var plain = ToolCallStream()
        #expect(plain.append("a <|t") == "a ")
        #expect(plain.append("ag|> b") == "<|tag|> b")
        #expect(plain.finish(makeID: Self.ids()).content == nil)
    }

    @Test("a forced call start (tool_choice naming a function) and the model's rest parse")
    func forcedStartParses() {
        let start = ToolCallSyntax.start(calling: "get_weather")
        #expect(start == #"<|tool_call|>[{"name": "get_weather", "arguments":"#)
        let (content, calls) = ToolCallSyntax.parse(
            start + #" {"city": "Paris"}}]<|/tool_call|>"#, makeID: Self.ids())
        #expect(content == nil)
        #expect(calls == [ToolCall(id: "call_1", name: "get_weather", arguments: #"{"city":"Paris"}"#)])
        // Cut off inside the arguments: no call, the text (forced start included) is content.
        let cut = start + #" {"city": "Par"#
        let (text, none) = ToolCallSyntax.parse(cut, makeID: Self.ids())
        #expect(none.isEmpty && text == cut)
    }
}

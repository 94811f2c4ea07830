import Foundation
import PhiFormats
import Testing

@testable import PhiText

/// The public surface others build on: ChatMessage rendering, errors that name the template
/// line (and exit 65), the template's own raise_exception message, the real clock.
@Suite("ChatTemplate API")
struct ChatTemplateAPITests {
    @Test("ChatMessage rendering equals the JSON-message rendering of the Phi-3.5 golden")
    func chatMessagesRenderLikeGolden() throws {
        let template = try ChatTemplateFixtures.template("phi-3.5-mini")
        let golden = ChatTemplateFixtures.cases(for: "phi-3.5-mini").first {
            $0["conversation"]?.stringValue == "multi-turn"
                && $0["add_generation_prompt"]?.boolValue == true
        }!
        let messages = [
            ChatMessage(role: "system", content: "You are terse."),
            ChatMessage(role: "user", content: "Hi"),
            ChatMessage(role: "assistant", content: "Hello! How can I help?"),
            ChatMessage(role: "user", content: "Tell me a joke."),
        ]
        let text = try template.render(messages: messages, addGenerationPrompt: true)
        #expect(text == golden["expected"]!.stringValue!)
        #expect(
            text
                == "<|system|>\nYou are terse.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\nHello! How can I help?<|end|>\n<|user|>\nTell me a joke.<|end|>\n<|assistant|>\n"
        )
    }

    @Test("Mistral's raise_exception on a wrong role order becomes the error, with its message")
    func raiseExceptionCarriesTheTemplatesMessage() throws {
        let template = try ChatTemplateFixtures.template("mistral-7b-instruct-v0.1")
        let messages = [
            ChatMessage(role: "user", content: "a"), ChatMessage(role: "user", content: "b"),
        ]
        do {
            _ = try template.render(messages: messages, addGenerationPrompt: true)
            Issue.record("rendered a conversation the template rejects")
        } catch {
            #expect(
                error
                    == .raised(
                        template: "'mistral-7b-instruct-v0.1'",
                        message:
                            "Conversation roles must alternate user/assistant/user/assistant/...",
                        line: 1))
            #expect(error.exitCode == .dataError)
            #expect(
                error.message.hasSuffix(
                    "rejected the conversation: Conversation roles must alternate user/assistant/user/assistant/..."
                ))
        }
    }

    @Test("unsupported syntax is an error naming line and column, never a different prompt")
    func unsupportedSyntaxNamesTheLine() {
        let cases: [(String, String, Int, Int)] = [
            (
                "{{ bos_token }}\n{% include 'header.jinja' %}",
                "the 'include' tag is not supported in chat templates", 2, 4
            ),
            (
                "{% for m in messages %}\n  {{ m.content | frobnicate }}\n{% endfor %}",
                "no filter named 'frobnicate'", 2, 18
            ),
            (
                "{% if messages %}\nno endif",
                "unexpected end of template: looking for 'elif' or 'else' or 'endif' to close 'if' from line 1",
                2, 9
            ),
            ("{{ messages[0]['content'] is shiny }}", "no test named 'shiny'", 1, 30),
            ("ok\n\n   {{ 'unterminated }}", "unterminated string literal", 3, 7),
        ]
        for (source, message, line, column) in cases {
            #expect(
                throws: ChatTemplateError.syntax(
                    template: "'t'", message: message, line: line, column: column)
            ) {
                try ChatTemplate(source: source, name: "t")
            }
        }
        let error = ChatTemplateError.syntax(template: "'t'", message: "x", line: 2, column: 4)
        #expect(error.message == "chat template 't', line 2, column 4: x")
        #expect(error.exitCode == .dataError)
        #expect(error.hint != nil)
    }

    @Test("nesting is bounded: 99 levels render, 100 are refused instead of overflowing the stack")
    func nestingIsBounded() throws {
        let user = [ChatMessage(role: "user", content: "x")]
        func parens(_ n: Int) -> String {
            "{{ " + String(repeating: "(", count: n) + "1" + String(repeating: ")", count: n)
                + " }}"
        }
        #expect(
            try ChatTemplate(source: parens(99)).render(messages: user, addGenerationPrompt: false)
                == "1")
        let blocks =
            String(repeating: "{% if true %}", count: 5_000)
            + String(repeating: "{% endif %}", count: 5_000)
        for source in [
            parens(100), parens(100_000), blocks,
            "{{ " + String(repeating: "not ", count: 5_000) + "1 }}",
        ] {
            do {
                _ = try ChatTemplate(source: source)
                Issue.record("parsed a template nested \(source.count) characters deep")
            } catch {
                guard case .syntax(_, let message, _, _) = error else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(message == "the template nests deeper than 100 levels")
            }
        }
        // A macro that recurses without end stops with an error too.
        let runaway = try ChatTemplate(source: "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}")
        #expect(throws: ChatTemplateError.self) {
            try runaway.render(messages: user, addGenerationPrompt: false)
        }
    }

    @Test("a runtime error names the line of the failing expression")
    func runtimeErrorNamesTheLine() throws {
        let template = try ChatTemplate(
            source:
                "{% for m in messages %}\n{{ m.content }}\n{{ m.content + loop.index }}\n{% endfor %}",
            name: "t")
        #expect(
            throws: ChatTemplateError.render(
                template: "'t'", message: "can only concatenate str (not \"int\") to str", line: 3)
        ) {
            try template.render(
                messages: [ChatMessage(role: "user", content: "hi")], addGenerationPrompt: false)
        }
    }

    @Test("an empty conversation is refused, as apply_chat_template refuses it")
    func emptyConversation() throws {
        let template = try ChatTemplate(source: "{{ messages }}")
        #expect(throws: ChatTemplateError.self) {
            try template.render(messages: [], addGenerationPrompt: true)
        }
        #expect(throws: ChatTemplateError.self) {
            try template.render(conversation: [.string("not an object")], addGenerationPrompt: true)
        }
    }

    @Test("extra context overrides special tokens; tools and documents default to none")
    func contextVariables() throws {
        let template = try ChatTemplate(
            source:
                "{{ bos_token }}|{{ tools is none }}|{{ documents is none }}|{{ date_string }}|{{ add_generation_prompt }}",
            specialTokens: ["bos_token": "<s>"])
        let user = [ChatMessage(role: "user", content: "x")]
        #expect(
            try template.render(messages: user, addGenerationPrompt: true) == "<s>|True|True||True")
        let text = try template.render(
            messages: user, addGenerationPrompt: false,
            extraContext: [
                "bos_token": .string("<B>"), "tools": .array([]), "date_string": .string("1 Jan"),
            ])
        #expect(text == "<B>|False|True|1 Jan|False")
    }

    @Test("strftime_now reads the real clock unless pinned")
    func strftimeUsesTheClock() throws {
        var template = try ChatTemplate(source: "{{ strftime_now('%Y-%m-%d') }}")
        let user = [ChatMessage(role: "user", content: "x")]
        let today = try template.render(messages: user, addGenerationPrompt: false)
        #expect(today.wholeMatch(of: /20\d\d-\d\d-\d\d/) != nil)
        template.now = { ChatTemplateFixtures.now }
        #expect(try template.render(messages: user, addGenerationPrompt: false) == "2025-03-09")
    }
}

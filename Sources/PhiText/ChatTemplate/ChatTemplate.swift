import Foundation
import PhiFormats

/// Data a caller passes into a template (`tools`, `documents`, `date_string`, message
/// fields): JSON, which is all transformers lets a template see (`_plain_template_data`).
/// Key order is kept, so `tools | tojson` prints keys in the caller's order.
public typealias TemplateValue = JSONValue

/// A model's chat template (Jinja), parsed once and rendered the way transformers'
/// `apply_chat_template(messages, tokenize=False, add_generation_prompt=…)` renders it:
/// the same Jinja environment (trim_blocks, lstrip_blocks, loop controls, transformers'
/// `tojson`, `raise_exception`, `strftime_now`, sandboxed attribute access), the same
/// variables (`messages`, `tools`/`documents` as none when absent, `add_generation_prompt`,
/// the special tokens, extra context), the same message clean-up (keys whose value is null
/// dropped, reasoning fields aliased).
public struct ChatTemplate: Sendable {
    /// The template's name ("default" unless the model has several).
    public let name: String
    public let source: String
    /// `bos_token`, `eos_token`, … as the template sees them.
    public let specialTokens: [String: String]
    /// Where the template came from, for error messages: a file, or the name.
    let origin: String
    /// What `strftime_now()` reads; tests pin it.
    public var now: @Sendable () -> Date = { Date() }
    private let nodes: [JinjaNode]

    /// Parses `source`; syntax phikit can't render faithfully is an error naming the line.
    public init(
        source: String, name: String = "default", specialTokens: [String: String] = [:]
    ) throws(ChatTemplateError) {
        try self.init(source: source, name: name, specialTokens: specialTokens, origin: "'\(name)'")
    }

    init(
        source: String, name: String, specialTokens: [String: String], origin: String
    ) throws(ChatTemplateError) {
        self.name = name
        self.source = source
        self.specialTokens = specialTokens
        self.origin = origin
        do {
            nodes = try JinjaParser.parse(source)
        } catch {
            throw Self.publicError(error, origin: origin)
        }
    }

    public func render(
        messages: [ChatMessage], addGenerationPrompt: Bool,
        extraContext: [String: TemplateValue] = [:]
    ) throws(ChatTemplateError) -> String {
        let conversation = messages.map { m in
            TemplateValue.object([("role", .string(m.role)), ("content", .string(m.content))])
        }
        return try render(
            conversation: conversation, addGenerationPrompt: addGenerationPrompt,
            extraContext: extraContext)
    }

    /// Renders messages given as JSON objects, for fields beyond role and content
    /// (`tool_calls`, `tool_call_id`, `reasoning_content`, a system message's `tools`…).
    /// `extraContext["tools"]` and `["documents"]` are the `tools=` and `documents=` of
    /// apply_chat_template; other keys become template variables (overriding special tokens).
    public func render(
        conversation: [TemplateValue], addGenerationPrompt: Bool,
        extraContext: [String: TemplateValue] = [:]
    ) throws(ChatTemplateError) -> String {
        guard !conversation.isEmpty else {
            throw .invalidConversation(
                "cannot apply a chat template to an empty conversation; give at least one message")
        }
        var context: [String: JinjaValue] = [:]
        for (key, value) in specialTokens { context[key] = .string(value) }
        for (key, value) in extraContext { context[key] = JinjaValue(value) }
        context["tools"] = extraContext["tools"].map(JinjaValue.init) ?? JinjaValue.none
        context["documents"] = extraContext["documents"].map(JinjaValue.init) ?? JinjaValue.none
        if case .list(let documents) = context["documents"],
            documents.contains(where: { if case .dict = $0 { false } else { true } })
        {
            throw .invalidConversation(
                "documents should be a list of objects with 'title' and 'text' keys")
        }
        context["messages"] = .list(try conversation.enumerated().map(Self.templateMessage))
        context["add_generation_prompt"] = .bool(addGenerationPrompt)
        do {
            return try JinjaRenderer(context: context, now: now).render(nodes)
        } catch {
            throw Self.publicError(error, origin: origin)
        }
    }

    /// A message as the template sees it: null-valued keys dropped (apply_chat_template does
    /// this so `content: null` reads as absent), and a reasoning text under `reasoning_content`,
    /// `thinking` or `reasoning` copied to `thinking` (first) and `reasoning_content` (last).
    private static func templateMessage(
        _ indexed: (offset: Int, element: TemplateValue)
    ) throws(ChatTemplateError) -> JinjaValue {
        guard case .object(let members) = indexed.element else {
            throw .invalidConversation("message \(indexed.offset + 1) is not a JSON object")
        }
        let kept = members.filter { !$0.value.isNull }
        var message = JinjaDict()
        let reasoning = ["reasoning_content", "thinking", "reasoning"].lazy
            .compactMap { key in kept.first { $0.key == key }?.value }.first
        if let reasoning { message.set("thinking", JinjaValue(reasoning)) }
        for (key, value) in kept { message.set(key, JinjaValue(value)) }
        if let reasoning { message.set("reasoning_content", JinjaValue(reasoning)) }
        return .dict(message)
    }

    private static func publicError(_ error: any Error, origin: String) -> ChatTemplateError {
        switch error {
        case let e as JinjaError: e.publicError(template: origin)
        case let e as ChatTemplateError: e
        default: .render(template: origin, message: "\(error)", line: 1)
        }
    }
}

import PhiEngine
import PhiText
import PhiFormats
import PhiKit

/// Turns a request's messages or prompt into the token ids the model sees, exactly as
/// `phikit run` and transformers' apply_chat_template would: chats through the model's chat
/// template (with `tools` passed as apply_chat_template passes them), plain prompts encoded
/// with the tokenizer's BOS.
struct PromptBuilder {
    let container: ModelContainer
    let errorText: ErrorText

    func tokens(for input: CompletionRequest.Input) throws(APIError) -> [Int] {
        switch input {
        case .text(let text):
            do {
                return try container.tokenizer.encode(text, addSpecialTokens: true)
            } catch {
                let reason = errorText.message(of: error)
                throw .invalidRequest(
                    "The prompt could not be tokenized: \(reason)", param: "prompt",
                    code: "tokenizer_error")
            }
        case .tokens(let ids):
            let vocabulary = container.model.vocabularySize
            if let bad = ids.first(where: { $0 < 0 || $0 >= vocabulary }) {
                throw .invalidRequest(
                    "token id \(bad) in 'prompt' is outside the vocabulary (0..<\(vocabulary))",
                    param: "prompt", code: "invalid_value")
            }
            return ids
        case .chat(let messages, let tools):
            guard let template = container.chatTemplate else {
                throw .invalidRequest(
                    "This model has no chat template (a base model): use /v1/completions with "
                        + "a plain 'prompt'", param: "messages", code: "no_chat_template")
            }
            let conversation = try conversation(messages, tools: tools, template: template)
            do {
                return try ChatPrompt.render(
                    conversation: conversation, template: template,
                    tokenizer: container.tokenizer,
                    extraContext: tools.isEmpty ? [:] : ["tools": .array(tools)]
                ).ids
            } catch let error as any UserFacingError {
                throw .invalidRequest(
                    "The chat template could not render these messages: "
                        + errorText.message(of: error),
                    param: "messages", code: "template_error")
            } catch {
                throw .invalidRequest(
                    errorText.message(of: error), param: "messages", code: "template_error")
            }
        }
    }

    /// The prompt as text, for `echo`: as sent, or its token ids (checked by `tokens(for:)`)
    /// decoded.
    func text(of input: CompletionRequest.Input) -> String {
        switch input {
        case .text(let text): text
        case .tokens(let ids): container.tokenizer.decode(ids)
        case .chat: ""
        }
    }

    /// What the answer is made to start with for `tool_choice` "required" (the model's
    /// tool-call tag) or a named function (the tag, then the call up to its arguments): fed
    /// after the prompt as one block. The rest of the call is enforced token by token
    /// (`RequestedFormat.toolCalls`); only a length limit can leave it unfinished.
    func forcedStart(_ choice: CompletionRequest.ToolChoice) throws(APIError) -> String? {
        let start: String
        switch choice {
        case .none, .auto: return nil
        case .required: start = ToolCallSyntax.open
        case .function(let name): start = ToolCallSyntax.start(calling: name)
        }
        guard container.tokenizer.tokenID(for: ToolCallSyntax.open) != nil else {
            throw .invalidRequest(
                "This model has no \(ToolCallSyntax.open) token to start a tool call with: "
                    + "'tool_choice' can only be \"none\" or \"auto\"", param: "tool_choice",
                code: "unsupported_value")
        }
        return start
    }

    /// The ids of text that continues a prompt (no BOS).
    func continuation(_ text: String) throws(APIError) -> [Int] {
        do {
            return try container.tokenizer.encode(text, addSpecialTokens: false)
        } catch {
            throw .server(errorText.message(of: error))
        }
    }

    /// The messages as the template wants them. Templates that read the tools from the system
    /// message (Phi-4-mini: `message['tools']`, a JSON string) get them there, in a system
    /// message of their own if the conversation has none. An assistant message's
    /// `tool_calls` are written back in the model's own syntax when the template does not
    /// render them, so the conversation reads as the model produced it.
    private func conversation(
        _ messages: [JSONValue], tools: [JSONValue], template: ChatTemplate
    ) throws(APIError) -> [JSONValue] {
        let source = template.source
        let takesTopLevelTools = source.contains("tools")
        let takesMessageTools =
            source.contains("'tools' in message") || source.contains("message['tools']")
            || source.contains("message.tools")
        if !tools.isEmpty && !takesTopLevelTools {
            throw .invalidRequest(
                "This model's chat template takes no tools", param: "tools",
                code: "unsupported_value")
        }
        var result = messages.map { message in
            rewriteToolCalls(message, templateRendersThem: source.contains("tool_calls"))
        }
        if !tools.isEmpty && takesMessageTools {
            let functions = tools.compactMap { $0["function"] }
            let json = JSONValue.array(functions).pythonDumps()
            if let system = result.firstIndex(where: { $0["role"]?.stringValue == "system" }) {
                result[system].set("tools", .string(json))
            } else {
                result.insert(
                    .object([
                        ("role", .string("system")), ("content", .string("")),
                        ("tools", .string(json)),
                    ]), at: 0)
            }
        }
        return result
    }

    private func rewriteToolCalls(_ message: JSONValue, templateRendersThem: Bool) -> JSONValue {
        guard !templateRendersThem, let calls = message["tool_calls"]?.arrayValue,
            !calls.isEmpty
        else { return message }
        let written = calls.compactMap { call -> JSONValue? in
            guard let function = call["function"], let name = function["name"] else { return nil }
            let text = function["arguments"]?.stringValue ?? "{}"
            let arguments = (try? JSONValue(parsing: Array(text.utf8))) ?? .string(text)
            return .object([("name", name), ("arguments", arguments)])
        }
        var copy = message
        let content = message["content"]?.stringValue ?? ""
        copy.set(
            "content",
            .string(
                content + ToolCallSyntax.open + JSONValue.array(written).pythonDumps()
                    + ToolCallSyntax.close))
        copy.set("tool_calls", nil)
        return copy
    }
}

extension JSONValue {
    /// Python's `json.dumps(value)`: ", " and ": " separators, non-ASCII escaped — how the
    /// models' own tool examples are written.
    func pythonDumps() -> String {
        switch self {
        case .array(let items): "[" + items.map { $0.pythonDumps() }.joined(separator: ", ") + "]"
        case .object(let members):
            "{"
                + members.map { JSONValue.string($0.key).pythonJSONDump() + ": " + $0.value.pythonDumps() }
                .joined(separator: ", ") + "}"
        default: pythonJSONDump()
        }
    }
}

import Foundation
import PhiFormats

/// A conversation turned into the prompt a model sees, the way transformers'
/// `apply_chat_template(messages, add_generation_prompt=True, tokenize=True)` does it: the
/// template renders the text (it writes BOS and the role markers itself), then the text is
/// encoded *without* the tokenizer's own special tokens, so nothing is added twice.
/// `tokenize --chat` and `run` both build their prompts here.
public struct ChatPrompt: Sendable, Equatable {
    public var text: String
    public var ids: [Int]

    public static func render(
        conversation: [TemplateValue], template: ChatTemplate, tokenizer: Tokenizer,
        extraContext: [String: TemplateValue] = [:]
    ) throws -> ChatPrompt {
        let text = try template.render(
            conversation: conversation, addGenerationPrompt: true, extraContext: extraContext)
        return ChatPrompt(text: text, ids: try tokenizer.encode(text, addSpecialTokens: false))
    }

    /// Reads a conversation file: a JSON array of message objects, each with a string `role`
    /// (other fields — `content`, `tool_calls`, … — go to the template as they are).
    public static func conversation(
        fromFile path: String
    ) throws -> [TemplateValue] {
        // LocalFile: a FIFO, a device or a directory is an error naming it, not a hang.
        let data = try LocalFile.read(path, limit: 256 << 20)
        let value: JSONValue
        do {
            value = try JSONValue(parsing: data)
        } catch {
            throw ChatPromptError.invalidConversation(path: path, detail: error.message)
        }
        guard case .array(let messages) = value, !messages.isEmpty else {
            throw ChatPromptError.invalidConversation(
                path: path, detail: "expected a non-empty JSON array of messages")
        }
        for (i, message) in messages.enumerated() {
            guard case .object(let fields) = message,
                let role = fields.first(where: { $0.key == "role" })?.value,
                case .string = role
            else {
                throw ChatPromptError.invalidConversation(
                    path: path, detail: "message \(i + 1) is not an object with a string 'role'")
            }
        }
        return messages
    }
}

public enum ChatPromptError: UserFacingError, Equatable {
    /// A conversation was given for a model whose files carry no chat template (a base model
    /// such as the bundled stories-260k).
    case noChatTemplate(directory: String)
    case invalidConversation(path: String, detail: String)

    public var message: String {
        switch self {
        case .noChatTemplate(let directory):
            "\(directory) has no chat template (no chat_template in tokenizer_config.json, "
                + "no chat_template.jinja)"
        case .invalidConversation(let path, let detail): "\(path): \(detail)"
        }
    }

    public var hint: String? {
        switch self {
        case .noChatTemplate: "this looks like a base model: give it plain text instead"
        case .invalidConversation:
            #"write the conversation as [{"role": "user", "content": "Hi"}]"#
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .noChatTemplate: .dataError
        case .invalidConversation: .usage
        }
    }
}

import PhiFormats

/// Why a chat template could not be loaded, parsed or rendered. Every case names the template
/// (its file, or its name) and, for template problems, the line — a chat template that phikit
/// cannot render faithfully is an error, never a silently different prompt.
public enum ChatTemplateError: UserFacingError, Equatable {
    /// The template is not valid Jinja, or uses syntax or a filter phikit does not support.
    case syntax(template: String, message: String, line: Int, column: Int)
    /// Rendering failed: a type error, an undefined value used as a value, a bad argument…
    case render(template: String, message: String, line: Int)
    /// The template itself refused the conversation with `raise_exception(message)`.
    case raised(template: String, message: String, line: Int)
    /// The conversation can't be passed to a template (empty, or a message isn't an object).
    case invalidConversation(String)
    /// tokenizer_config.json or chat_template.jinja exists but can't be read or has the wrong
    /// shape.
    case invalidConfig(path: String, message: String)

    public var message: String {
        switch self {
        case .syntax(let template, let message, let line, let column):
            "chat template \(template), line \(line), column \(column): \(message)"
        case .render(let template, let message, let line):
            "chat template \(template), line \(line): \(message)"
        case .raised(let template, let message, let line):
            "chat template \(template) (line \(line)) rejected the conversation: \(message)"
        case .invalidConversation(let problem):
            "conversation: \(problem)"
        case .invalidConfig(let path, let message):
            "\(path): \(message)"
        }
    }

    public var hint: String? {
        switch self {
        case .syntax:
            "phikit renders the Jinja subset that chat templates use; `--no-chat-template` sends "
                + "the prompt as it is"
        case .raised:
            "the template's own check failed: change the order or roles of the messages"
        case .render, .invalidConversation, .invalidConfig:
            nil
        }
    }

    public var exitCode: ExitCode { .dataError }
}

/// An error raised while lexing, parsing or rendering, before the template's name is known
/// and, for runtime errors, before the line of the failing node has been attached.
struct JinjaError: Error {
    enum Kind { case syntax, render, raised }

    var kind: Kind
    var message: String
    var line: Int?
    var column: Int?

    static func syntax(_ message: String, line: Int, column: Int) -> JinjaError {
        JinjaError(kind: .syntax, message: message, line: line, column: column)
    }

    static func render(_ message: String) -> JinjaError {
        JinjaError(kind: .render, message: message)
    }

    /// The public error, naming the template.
    func publicError(template: String) -> ChatTemplateError {
        switch kind {
        case .syntax:
            .syntax(template: template, message: message, line: line ?? 1, column: column ?? 1)
        case .render: .render(template: template, message: message, line: line ?? 1)
        case .raised: .raised(template: template, message: message, line: line ?? 1)
        }
    }
}

import Foundation
import PhiEngine
import PhiFormats
import PhiKit

extension ChatLoop {
    enum Next { case stay, leave }

    /// Runs a slash command; nothing here is sent to the model.
    func perform(_ command: SlashCommand) throws -> Next {
        switch command {
        case .help: note(SlashCommand.helpText)
        case .bye: return .leave
        case .reset:
            chat.reset()
            let kept = chat.history.system == nil ? "" : "; the system message stays"
            note("(the conversation is cleared\(kept))")
        case .system(nil):
            note(chat.history.system.map { "system: \($0)" } ?? "(no system message)")
        case .system(let text?):
            chat.history.system = text
            note("(system message set)")
        case .showSettings: note(ChatSetting.describe(chat.parameters))
        case .set(let name, let value):
            try ChatSetting.apply(name, value, to: &chat.parameters)
            note("(\(ChatSetting.describe(chat.parameters)))")
        case .save(let path, let force):
            try chat.history.save(to: path, force: force)
            note("(saved \(chat.history.messages.count) messages to \(path))")
        case .load(let path):
            chat.history = try ChatHistory.load(from: path)
            note("(loaded \(chat.history.messages.count) messages from \(path))")
        case .stats:
            showStats.toggle()
            guard showStats else {
                note("(no more figures after the answers; /stats turns them on again)")
                break
            }
            if let last = chat.lastReply { note(Self.statistics(last)) }
            note("(figures follow each answer from now on; /stats turns them off)")
        case .format(nil):
            note(answerFormat.map { "(answers follow \(Self.describe($0.format)))" }
                ?? "(answers are free text)")
        case .format(let request?):
            answerFormat = try Self.outputFormat(request).map(chat.container.structuredOutput)
            note(answerFormat.map { "(the next answers follow \(Self.describe($0.format)))" }
                ?? "(answers are free text again)")
        }
        return .stay
    }

    /// The format `/format` asks for (nil: off), checked as `--json-schema` and the rest are.
    static func outputFormat(_ request: AnswerFormat) throws -> OutputFormat? {
        let format: OutputFormat? =
            switch request {
            case .json: .jsonObject
            case .schema(let source): try OutputFormatFlags.jsonSchema(source)
            case .regex(let pattern): .regex(pattern)
            case .grammar(let path): .grammar(try OutputFormatFlags.readFile(path, flag: "/format grammar"))
            case .off: nil
            }
        if let format { try OutputFormatFlags.check(format) }
        return format
    }

    static func describe(_ format: OutputFormat) -> String {
        switch format {
        case .jsonObject: "a JSON object"
        case .jsonSchema: "the JSON schema"
        case .regex(let pattern): "the pattern \(pattern)"
        case .grammar: "the grammar"
        }
    }
}

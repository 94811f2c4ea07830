import PhiEngine
import PhiFormats
import PhiText

/// What a chat does with a line that starts with `/` (ollama's and mlx_lm.chat's commands).
/// Anything else the user types is a message for the model.
public enum SlashCommand: Sendable, Equatable {
    case help
    /// `/reset` or `/clear`: forget the turns, keep the system message.
    case reset
    /// `/system TEXT` sets the system message; `/system` alone shows it.
    case system(String?)
    /// `/set NAME VALUE` changes a sampling setting; `/set` alone lists them.
    case set(name: String, value: String)
    case showSettings
    /// `/save [--force] FILE`: `--force` replaces a file that is not a conversation.
    case save(path: String, force: Bool = false)
    case load(path: String)
    /// `/stats`: turns the figures after every answer on (showing the last turn's) or off.
    case stats
    /// `/format json|schema FILE|regex P|grammar FILE|off`: the shape of the next answers
    /// (structured output); `/format` alone shows it.
    case format(AnswerFormat?)
    case bye

    /// The command on `line` (which starts with `/`), or an error that says how to fix it.
    public static func parse(_ line: String) throws(SlashCommandError) -> SlashCommand {
        let trimmed = line.trimmingWhitespace()
        let word = String(trimmed.prefix { !$0.isWhitespace })
        let rest = String(trimmed.dropFirst(word.count)).trimmingWhitespace()
        func argument(_ what: String) throws(SlashCommandError) -> String {
            guard !rest.isEmpty else { throw .missingArgument(command: word, what: what) }
            return rest
        }
        switch word {
        case "/help", "/?": return .help
        case "/reset", "/clear": return .reset
        case "/system": return .system(rest.isEmpty ? nil : rest)
        case "/set":
            guard !rest.isEmpty else { return .showSettings }
            let parts = rest.split(maxSplits: 1, whereSeparator: \.isWhitespace)
            guard parts.count == 2 else {
                throw .missingArgument(command: "/set \(parts[0])", what: "a value")
            }
            return .set(name: String(parts[0]), value: String(parts[1]).trimmingWhitespace())
        case "/save":
            let flag = rest.prefix { !$0.isWhitespace }
            guard flag == "--force" else { return .save(path: try argument("a file name")) }
            let path = String(rest.dropFirst(flag.count)).trimmingWhitespace()
            guard !path.isEmpty else {
                throw .missingArgument(command: "/save --force", what: "a file name")
            }
            return .save(path: path, force: true)
        case "/load": return .load(path: try argument("a file name"))
        case "/stats": return .stats
        case "/format": return .format(rest.isEmpty ? nil : try AnswerFormat.parse(rest))
        case "/bye", "/exit", "/quit": return .bye
        default: throw .unknown(word)
        }
    }

    /// The lines `/help` prints.
    public static let helpText = """
        /help                 this list
        /reset, /clear        forget the conversation (the system message stays)
        /system TEXT          set the system message; /system shows it
        /set NAME VALUE       temp, top_p, top_k, min_p, max_tokens, seed,
                              repetition_penalty, repetition_context_size,
                              presence_penalty, frequency_penalty; /set lists them
        /save FILE.json       write the conversation ([{"role", "content"}]); replaces
                              only an earlier conversation: /save --force FILE for any file
        /load FILE.json       continue a saved conversation
        /stats                figures after each answer (prompt tokens new and reused, time
                              to first token, tok/s): on, or off again
        /format KIND          the next answers' shape, enforced token by token: json (any
                              object), schema FILE|{...}, regex PATTERN, grammar FILE
                              (GBNF); /format off ends it, /format shows it
        /bye                  leave (also Ctrl-D; Ctrl-C only stops an answer)
        \"\"\"                   begin and end a message of several lines
        """
}

/// What `/format` asks for; the chat reads the file and compiles the format.
public enum AnswerFormat: Sendable, Equatable {
    case json
    /// A schema file, or the schema itself when it begins with `{`.
    case schema(String)
    case regex(String)
    case grammar(path: String)
    case off

    static func parse(_ text: String) throws(SlashCommandError) -> AnswerFormat {
        let kind = String(text.prefix { !$0.isWhitespace })
        let rest = String(text.dropFirst(kind.count)).trimmingWhitespace()
        func argument(_ what: String) throws(SlashCommandError) -> String {
            guard !rest.isEmpty else { throw .missingArgument(command: "/format \(kind)", what: what) }
            return rest
        }
        switch kind {
        case "json": return .json
        case "schema": return .schema(try argument("a schema file or {...}"))
        case "regex": return .regex(try argument("a pattern"))
        case "grammar": return .grammar(path: try argument("a GBNF file"))
        case "off": return .off
        default: throw .unknownFormat(kind)
        }
    }
}

/// Sampling settings by the names `/set` takes (ollama's `temperature`, mlx-lm's `temp`, …).
/// It only maps names to fields; the rules are `GenerationParameters.validate`'s.
public enum ChatSetting {
    /// The names `/set` takes, first the one `/set` lists.
    static let names: [(field: GenerationParameters.Field, names: [String])] = [
        (.temperature, ["temp", "temperature"]), (.topP, ["top_p"]), (.topK, ["top_k"]),
        (.minP, ["min_p"]), (.maxTokens, ["max_tokens", "num_predict"]), (.seed, ["seed"]),
        (.repetitionPenalty, ["repetition_penalty", "repeat_penalty"]),
        (.repetitionContextSize, ["repetition_context_size", "repeat_last_n"]),
        (.presencePenalty, ["presence_penalty"]), (.frequencyPenalty, ["frequency_penalty"]),
    ]

    /// Every setting's name, as `/set` lists them.
    public static var settingNames: String {
        names.map { $0.names[0] }.joined(separator: ", ")
    }

    /// Sets `name` to `value` in `parameters`, checked as `run` checks its flags (`seed
    /// none`: a fresh seed each answer).
    public static func apply(
        _ name: String, _ value: String, to parameters: inout GenerationParameters
    ) throws(SlashCommandError) {
        let key = name.replacingHyphens()
        guard let field = names.first(where: { $0.names.contains(key) })?.field else {
            throw .unknownSetting(name)
        }
        var changed = parameters
        if field == .seed && value == "none" {
            changed.seed = nil
        } else if field == .repetitionPenalty && value == "none" {
            changed.repetitionPenalty = nil
        } else if field.isInteger {
            guard let integer = Int(value) else {
                throw .invalidValue(name: name, value: value, rule: "an integer")
            }
            changed.set(field, .integer(integer))
        } else {
            guard let number = Double(value), number.isFinite else {
                throw .invalidValue(name: name, value: value, rule: "a number")
            }
            changed.set(field, .number(number))
        }
        do throws(GenerationError) {
            try changed.validate(naming: [field: name])
        } catch {
            throw .invalidValue(name: name, value: value, rule: error.message)
        }
        parameters = changed
    }

    /// `/set` with no arguments: every setting `/set` takes and its current value, one line
    /// (the ones not in use say `none`).
    public static func describe(_ p: GenerationParameters) -> String {
        var parts = [
            "temp \(p.temperature)", "top_p \(p.topP)", "top_k \(p.topK)", "min_p \(p.minP)",
            "max_tokens \(p.maxTokens)",
        ]
        parts.append("repetition_penalty \(p.repetitionPenalty.map { "\($0)" } ?? "none")")
        parts.append("repetition_context_size \(p.repetitionContextSize)")
        parts.append("presence_penalty \(p.presencePenalty)")
        parts.append("frequency_penalty \(p.frequencyPenalty)")
        parts.append("seed \(p.seed.map { String(Int64(bitPattern: $0)) } ?? "none")")
        return parts.joined(separator: ", ")
    }
}

/// A slash command that cannot run; the chat prints it as one line and sends nothing.
public enum SlashCommandError: UserFacingError, Equatable {
    case unknown(String)
    case missingArgument(command: String, what: String)
    case unknownSetting(String)
    case invalidValue(name: String, value: String, rule: String)
    case unknownFormat(String)

    public var message: String {
        switch self {
        case .unknown(let word): "unknown command '\(word)'"
        case .missingArgument(let command, let what): "\(command) needs \(what)"
        case .unknownSetting(let name): "no setting '\(name)'"
        case .invalidValue(let name, let value, let rule):
            "'\(value)' is not a value for \(name): \(rule)"
        case .unknownFormat(let kind): "no answer format '\(kind)'"
        }
    }

    public var hint: String? {
        switch self {
        case .unknown: "type /help for the commands; nothing was sent to the model"
        case .unknownSetting: "settings: " + ChatSetting.settingNames
        case .unknownFormat: "/format json, schema FILE, regex PATTERN, grammar FILE or off"
        case .missingArgument, .invalidValue: nil
        }
    }

    public var exitCode: ExitCode { .usage }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(drop { $0.isWhitespace }.reversed().drop { $0.isWhitespace }.reversed())
    }

    fileprivate func replacingHyphens() -> String {
        String(map { $0 == "-" ? "_" : $0 }).lowercased()
    }
}

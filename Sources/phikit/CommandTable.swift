import PhiFormats
import PhiKit

/// Every subcommand, in the order the overview lists them, and the dispatcher that runs one.
enum CommandTable {
    // Computed: an array of metatypes is not Sendable, so it cannot be a static let.
    static var all: [any Command.Type] {
        [
            PullCommand.self,
            ConvertCommand.self,
            FuseCommand.self,
            EvalCommand.self,
            PushCommand.self,
            VerifyCommand.self,
            RunCommand.self,
            ChatCommand.self,
            ServeCommand.self,
            ListCommand.self,
            RmCommand.self,
            InspectCommand.self,
            TokenizeCommand.self,
            HelpCommand.self,
            VersionCommand.self,
            CompletionsCommand.self,
        ]
    }

    /// The commands whose first argument is MODEL; shell completion offers model names there
    /// (`pull` the registry's, the others those of `phikit list`).
    static let modelCommands: Set<String> = [
        "pull", "convert", "fuse", "eval", "verify", "run", "chat", "serve", "rm", "inspect", "tokenize",
    ]

    /// The flags (no value) and options (with a value) `command` reads, learnt by letting it
    /// parse an empty command line: its `init` asks the reader for every name it knows before
    /// it reaches the missing positional. Completions are made from this, so they cannot
    /// drift from what the parser accepts.
    static func spelling(of command: any Command.Type) -> (flags: [String], options: [String]) {
        var reader = ArgumentReader([])
        _ = try? command.init(&reader)
        return (reader.knownFlags.sorted(), reader.knownOptions.sorted())
    }

    static func find(_ word: String) -> (any Command.Type)? {
        all.first { $0.name == word || $0.aliases.contains(word) }
    }

    static var names: [String] { all.map { $0.name } }
}

/// Top-level dispatch: global options, command lookup, parsing, running, and the mapping of
/// errors to diagnostics and exit codes. Returns the process exit code; only main.swift exits.
enum CLI {
    static func main(_ arguments: [String]) -> Int32 {
        guard let first = arguments.first else {
            // Like git: no command is a usage error, so the overview goes to stderr with 64.
            Diagnostics.text(Help.overview)
            return ExitCode.usage.rawValue
        }
        switch first {
        case "--help", "-h":
            return output(Help.overview)
        case "--version", "-V":
            return output(VersionCommand.text)
        default:
            break
        }
        if first.hasPrefix("-") {
            let hint =
                FlagSuggestion.nearest(to: first, in: ["--help", "-h", "--version", "-V"])
                .map { "did you mean '\($0)'?" }
                ?? "options go after the command: phikit <command> [options]"
            Diagnostics.error("unknown option '\(first)'", hint: hint)
            Diagnostics.usage(Help.globalUsage)
            return ExitCode.usage.rawValue
        }
        guard let command = CommandTable.find(first) else {
            let commands = "commands: " + CommandTable.names.joined(separator: ", ")
            let hint =
                Suggestion.nearest(to: first, in: CommandTable.names)
                .map { "did you mean '\($0)'? \(commands)" } ?? commands
            Diagnostics.error("unknown command '\(first)'", hint: hint)
            return ExitCode.usage.rawValue
        }
        var reader = ArgumentReader(arguments.dropFirst())
        if reader.wantsHelp { return output(Help.page(for: command)) }
        return execute(command, &reader)
    }

    /// Prints a help or version text; exit 0, or 74 when stdout cannot take it.
    private static func output(_ text: String) -> Int32 {
        do {
            try StandardOutput.print(text)
            return ExitCode.success.rawValue
        } catch let error as StandardOutputError {
            Diagnostics.error(error.message)
            return error.exitCode.rawValue
        } catch {
            return ExitCode.ioError.rawValue
        }
    }

    private static func execute(
        _ command: any Command.Type, _ reader: inout ArgumentReader
    )
        -> Int32
    {
        do {
            try command.init(&reader).run()
            return ExitCode.success.rawValue
        } catch is StandardOutputClosed {
            return ExitCode.ioError.rawValue  // quiet, as a Unix tool on SIGPIPE
        } catch let error as UsageError {
            Diagnostics.error(error.message, hint: error.hint)
            Diagnostics.usage(command.usage)
            return error.exitCode.rawValue
        } catch let error as any UserFacingError {
            Diagnostics.error(error.message, hint: error.hint)
            return error.exitCode.rawValue
        } catch {
            Diagnostics.error(
                "internal error: \(error)",
                hint: "this is a bug in phikit; please report it with the command you ran")
            return ExitCode.software.rawValue
        }
    }
}

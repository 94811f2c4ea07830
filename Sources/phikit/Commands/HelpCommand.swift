import PhiKit

/// `phikit help [COMMAND]`: the overview, or one command's usage and options, on stdout.
struct HelpCommand: Command {
    static let name = "help"
    static let summary = "Show help for phikit or for one command"
    static let usage = "phikit help [<command>]"
    static let help = """
        Prints the command overview, or the usage and options of <command>.
        `phikit <command> --help` does the same.
        """

    var topic: (any Command.Type)?

    init(_ args: inout ArgumentReader) throws {
        let word = args.optionalPositional()
        try args.finish()
        guard let word else { return }
        guard let command = CommandTable.find(word) else {
            let hint =
                Suggestion.nearest(to: word, in: CommandTable.names).map { "did you mean '\($0)'?" }
                ?? "commands: " + CommandTable.names.joined(separator: ", ")
            throw UsageError("unknown command '\(word)'", hint: hint)
        }
        topic = command
    }

    func run() throws {
        try StandardOutput.print(topic.map(Help.page(for:)) ?? Help.overview)
    }
}

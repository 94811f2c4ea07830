import PhiKit

/// `phikit help [COMMAND]`: the overview, or one command's usage and options, on stdout;
/// `phikit help --man`: all of it as a man page (troff).
struct HelpCommand: Command {
    static let name = "help"
    static let summary = "Show help for phikit or for one command"
    static let usage = "phikit help [<command>]\nphikit help --man"
    static let help = """
        Prints the command overview, or the usage and options of <command>.
        `phikit <command> --help` does the same.

        options:
          --man    print every command's help as one man page (troff; `make man` writes it to
                   docs/phikit.1, which `make install` installs)
        """

    var topic: (any Command.Type)?
    var manPage = false

    init(_ args: inout ArgumentReader) throws {
        manPage = args.flag("--man")
        let word = args.optionalPositional()
        try args.finish()
        if manPage, let word {
            throw UsageError("--man prints the whole manual, not one command's ('\(word)')")
        }
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
        if manPage { return try StandardOutput.print(ManPage.text, terminator: "") }
        try StandardOutput.print(topic.map(Help.page(for:)) ?? Help.overview)
    }
}

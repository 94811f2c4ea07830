/// The completion scripts `phikit completions` prints. Every command, alias, flag and option
/// comes from `CommandTable` (the names each command's parser reads), model names from
/// `phikit list --names` at completion time, so an installed script keeps up with new models.
struct CompletionScript {
    enum Shell: String, CaseIterable { case bash, zsh, fish }

    /// What the script needs to know about one command.
    struct Entry {
        var names: [String]  // the name, then its aliases
        var summary: String
        var flags: [String]
        var options: [String]
        /// The `phikit list` call whose output completes the first argument, if it is MODEL.
        var models: String?
    }

    let shell: Shell
    let entries: [Entry]

    init(shell: Shell) {
        self.shell = shell
        entries = CommandTable.all.map { command in
            let spelling = CommandTable.spelling(of: command)
            let models: String? =
                switch command.name {
                case "pull": "phikit list --available --names"
                case let name where CommandTable.modelCommands.contains(name): "phikit list --names"
                default: nil
                }
            return Entry(
                names: [command.name] + command.aliases, summary: command.summary,
                flags: spelling.flags, options: spelling.options, models: models)
        }
    }

    var text: String {
        switch shell {
        case .bash: bash
        case .zsh: zsh
        case .fish: fish
        }
    }

    static let shells = Shell.allCases.map(\.rawValue).joined(separator: " ")
    var commandWords: String { entries.flatMap(\.names).joined(separator: " ") }
    var commandNames: String { entries.map { $0.names[0] }.joined(separator: " ") }
}

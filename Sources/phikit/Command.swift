import PhiFormats

/// One subcommand: a small struct that parses its arguments in `init`, then does its job in
/// `run()` by calling PhiKit and printing the result to stdout.
///
/// The dispatcher handles `--help`/`-h` before `init` (so help works without the required
/// arguments), prints usage after a `UsageError`, and maps every `UserFacingError` to its exit
/// code. To add a command: write `Commands/<Verb>Command.swift` and list the type in
/// `CommandTable.all`.
protocol Command {
    /// The word after `phikit` (`"inspect"`).
    static var name: String { get }
    /// Other words that select the command (`ls` for `list`).
    static var aliases: [String] { get }
    /// One line for the command overview.
    static var summary: String { get }
    /// The usage line(s), each starting `phikit <name>`; shown after "usage:" in help and
    /// after usage errors.
    static var usage: String { get }
    /// What follows the usage in `phikit help <name>`: a description, then the arguments and
    /// options, one per line, aligned.
    static var help: String { get }

    /// Reads this command's arguments and ends with `try args.finish()`; throws `UsageError`.
    init(_ args: inout ArgumentReader) throws
    func run() throws
}

extension Command {
    static var aliases: [String] { [] }
}

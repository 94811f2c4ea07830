/// `phikit completions bash|zsh|fish`: a completion script for the shell, made from the same
/// command table as `--help`.
struct CompletionsCommand: Command {
    static let name = "completions"
    static let summary = "Print a shell completion script (bash, zsh or fish)"
    static let usage = "phikit completions bash|zsh|fish"
    static let help = """
        Prints a script that completes phikit's commands, their options, and model names
        (those `phikit list --names` prints; the registry's for pull) in <shell>.

        arguments:
          <shell>    bash, zsh or fish

        install:
          bash   phikit completions bash > ~/.local/share/bash-completion/completions/phikit
          zsh    phikit completions zsh > "${fpath[1]}/_phikit"   (or any folder on $fpath)
          fish   phikit completions fish > ~/.config/fish/completions/phikit.fish
        """

    var shell: CompletionScript.Shell

    init(_ args: inout ArgumentReader) throws {
        let word = try args.positional("shell")
        try args.finish()
        guard let shell = CompletionScript.Shell(rawValue: word) else {
            throw UsageError("unknown shell '\(word)'", hint: "give bash, zsh or fish")
        }
        self.shell = shell
    }

    func run() throws {
        try StandardOutput.print(CompletionScript(shell: shell).text, terminator: "")
    }
}

import PhiKit

/// The text of `phikit --help` and `phikit help <command>`.
enum Help {
    static let globalUsage = "phikit <command> [arguments] [options]"

    /// What phikit is, in one line (the overview's first line and the man page's NAME).
    static let tagline =
        "get Phi-family language models from the Hugging Face Hub, convert them to MLX format, check them and run them"

    static var overview: String {
        let width = CommandTable.all.map { $0.name.count }.max() ?? 0
        let commands = CommandTable.all.map { command in
            "  " + command.name.padding(to: width) + "   " + command.summary
        }
        return """
            phikit \(PhiKitVersion.string): get Phi-family language models from the Hugging Face Hub,
            convert them to MLX format, check them and run them.

            \(usageBlock(globalUsage))

            commands:
            \(commands.joined(separator: "\n"))

            options:
            \(globalOptions)

            \(modelAndOutput)

            exit codes: \(exitCodes)
            environment:
            \(environment)
            """
    }

    static let globalOptions = """
          -h, --help      show this help; `phikit help <command>` or `phikit <command> --help`
                          shows a command's options
          -V, --version   print the version
        """

    static let modelAndOutput = """
        MODEL is a registry alias (phi-3.5-mini), a Hub id (org/name[@revision]) or a directory.
        Results go to stdout; progress (on a terminal only) and diagnostics go to stderr.
        """

    static let exitCodes = """
        0 ok, 1 a check failed, 64 usage error (also when no command is given),
          65 bad model data, 66 not found, 69 network, 70 internal error, 74 local I/O,
          130 interrupted
        """

    static let environment = """
          HF_HUB_CACHE     the Hugging Face cache pulls go to (default $HF_HOME/hub)
          HF_HOME          Hugging Face home: cache and token (default
                           $XDG_CACHE_HOME/huggingface, else ~/.cache/huggingface)
          HF_ENDPOINT      the Hub to download from (default https://huggingface.co)
          HF_TOKEN         access token for gated and private repos (else $HF_HOME/token)
          HF_HUB_OFFLINE   1: never touch the network, use only what is cached
          PHIKIT_HOME      where converted models go (default $XDG_DATA_HOME/phikit,
                           else ~/.local/share/phikit)
          PHIKIT_REGISTRY  path of registry.json (default: <prefix>/share/phikit beside the
                           binary); your own entries: $XDG_CONFIG_HOME/phikit/registry.json
          NO_COLOR         set: no colour in diagnostics and chat
        """

    static func page(for command: any Command.Type) -> String {
        var page = usageBlock(command.usage)
        if !command.aliases.isEmpty {
            page += "\naliases: " + command.aliases.joined(separator: ", ")
        }
        return page + "\n\n" + command.help
    }

    /// `usage: first line`, further lines aligned under it.
    static func usageBlock(_ usage: String) -> String {
        usage.split(separator: "\n").enumerated().map { index, line in
            (index == 0 ? "usage: " : "       ") + line
        }.joined(separator: "\n")
    }
}

extension String {
    /// Left-aligns in a column of `width` characters (for tables and help).
    func padding(to width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }

    /// Right-aligns in a column of `width` characters (numbers in tables).
    func leftPadding(to width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

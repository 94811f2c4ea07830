import PhiKit

/// `phikit help --man`: the man page, in troff (man(7) macros), made from the same command
/// table as `--help` and the completion scripts: each command's usage and help page as the
/// terminal shows them, the options its parser reads, and the overview's environment and
/// exit codes. `make man` writes it to docs/phikit.1, which `make install` installs; a test
/// checks that the committed page is this text.
enum ManPage {
    static var text: String {
        var lines = [
            ".TH PHIKIT 1 \"\" \"phikit \(PhiKitVersion.string)\" \"User Commands\"",
            ".SH NAME",
            "phikit \\- " + escape(Help.tagline),
            ".SH SYNOPSIS",
            ".B phikit",
            "\\fIcommand\\fR [\\fIarguments\\fR] [\\fIoptions\\fR]",
            ".SH DESCRIPTION",
        ]
        lines += preformatted(Help.modelAndOutput)
        lines.append(".SH COMMANDS")
        for command in CommandTable.all {
            lines.append(".SS " + escape(([command.name] + command.aliases).joined(separator: ", ")))
            lines.append(escape(command.summary) + ".")
            lines += preformatted(Help.page(for: command))
            let spelling = CommandTable.spelling(of: command)
            let names = (spelling.flags + spelling.options).sorted()
            if !names.isEmpty {
                lines.append(".PP")
                lines.append("Options read: " + escape(names.joined(separator: ", ")) + ".")
            }
        }
        lines.append(".SH OPTIONS")
        lines += preformatted(Help.globalOptions)
        lines.append(".SH ENVIRONMENT")
        lines += preformatted(Help.environment)
        lines.append(".SH EXIT STATUS")
        lines += preformatted(Help.exitCodes)
        lines.append(".SH SEE ALSO")
        lines.append("README.md and docs/ in phikit's source tree.")
        return lines.joined(separator: "\n") + "\n"
    }

    /// Text laid out for a terminal, kept as it is (no filling, no hyphenation).
    static func preformatted(_ text: String) -> [String] {
        [".PP", ".nf"] + text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { escape(String($0)) } + [".fi"]
    }

    /// troff-safe text: backslashes written as `\e`, ASCII hyphens as `\-` (so copied options
    /// stay ASCII), anything beyond ASCII as `\[uXXXX]` (troff reads its input as Latin-1
    /// unless told otherwise), and a line that would start with a control character guarded
    /// by `\&`.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\e"
            case "-": out += "\\-"
            case _ where scalar.value > 127:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\[u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "]"
            default: out.unicodeScalars.append(scalar)
            }
        }
        if out.hasPrefix(".") || out.hasPrefix("'") { out = "\\&" + out }
        return out
    }
}

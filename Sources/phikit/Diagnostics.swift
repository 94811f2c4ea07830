#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Everything phikit tells the user that is not a result goes through here, to stderr:
/// `error: …`, `warning: …`, `hint: …`, usage text, and TTY-only progress. stdout is left for
/// results (tables, `--json`) so they can be piped.
///
/// Labels are coloured only when stderr is a terminal, `NO_COLOR` is unset or empty
/// (no-color.org) and `TERM` is not `dumb`.
enum Diagnostics {
    static let stderrIsTerminal = isatty(STDERR_FILENO) == 1

    static let useColor: Bool = {
        guard stderrIsTerminal else { return false }
        if let noColor = getenv("NO_COLOR"), noColor.pointee != 0 { return false }
        if let term = getenv("TERM"), String(cString: term) == "dumb" { return false }
        return true
    }()

    static func error(_ message: String, hint: String? = nil) {
        emit(label: "error", color: "1;31", message)
        if let hint { self.hint(hint) }
    }

    static func warning(_ message: String) {
        emit(label: "warning", color: "1;33", message)
    }

    static func hint(_ message: String) {
        emit(label: "hint", color: "1;36", message)
    }

    /// Usage lines (`usage: phikit inspect <model> [--json]`), after a usage error.
    static func usage(_ usage: String) {
        writeStderr(Help.usageBlock(usage) + "\n")
    }

    /// Plain text on stderr (the overview when phikit is run without a command).
    static func text(_ text: String) {
        writeStderr(text.hasSuffix("\n") ? text : text + "\n")
    }

    /// A self-overwriting status line (downloads, conversion), shown only on a terminal so
    /// logs and pipes stay clean. Call `endProgress()` before printing anything else.
    static func progress(_ line: String) {
        guard stderrIsTerminal else { return }
        writeStderr("\r\u{1B}[2K" + line)
    }

    static func endProgress() {
        guard stderrIsTerminal else { return }
        writeStderr("\r\u{1B}[2K")
    }

    private static func emit(label: String, color: String, _ message: String) {
        let prefix = useColor ? "\u{1B}[\(color)m\(label):\u{1B}[0m" : "\(label):"
        writeStderr("\(prefix) \(message)\n")
    }

    /// Flushes stdout first so results and diagnostics appear in the order they were made.
    static func writeStderr(_ text: String) {
        fflush(nil)
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                write(STDERR_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return }  // stderr closed: nowhere left to complain
            offset += n
        }
    }
}

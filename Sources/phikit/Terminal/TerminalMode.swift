import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The terminal's settings while `chat` runs: raw while the user edits a line (every key comes
/// to us, nothing is echoed or turned into signals), "quiet" while an answer streams (Ctrl-C
/// is SIGINT again, typing is not echoed into the answer), and the user's own settings
/// whenever phikit stops — normal return, error, or a signal (SIGTERM, SIGHUP, SIGQUIT, a
/// crash), where the handler restores them before dying of the same signal.
///
/// The saved settings live in memory allocated before any handler is installed, and the
/// handlers only call tcsetattr, write, signal and raise: all async-signal-safe.
enum TerminalMode {
    /// The settings phikit found (restored on every exit), and the ones in force now.
    nonisolated(unsafe) private static let original = UnsafeMutablePointer<termios>.allocate(
        capacity: 1)
    nonisolated(unsafe) private static let current = UnsafeMutablePointer<termios>.allocate(
        capacity: 1)
    /// Whether the terminal is in one of our modes (so an exit must restore it).
    private static let changed = Atomic<Bool>(false)
    /// Whether bracketed paste is switched on (switched off again on exit).
    private static let pasteMode = Atomic<Bool>(false)

    static let fatalSignals = [
        SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS, SIGILL,
        SIGTRAP, SIGFPE,
    ]

    /// Initializes the flags `restoreFromSignal` reads, before any handler can run (see
    /// `InterruptibleJob.prepareForSignalHandler`).
    static func prepareForSignalHandler() {
        _ = changed.load(ordering: .relaxed)
        _ = pasteMode.load(ordering: .relaxed)
    }

    /// Saves the terminal's settings and installs the handlers; false when stdin is not a
    /// terminal.
    static func prepare() -> Bool {
        prepareForSignalHandler()
        guard tcgetattr(STDIN_FILENO, original) == 0 else { return false }
        current.pointee = original.pointee
        for number in fatalSignals { _ = signal(number, restoreAndDie) }
        _ = signal(SIGTSTP, suspend)
        atexit { TerminalMode.restore() }
        return true
    }

    /// Every key arrives as bytes at once: no echo, no line buffering, no Ctrl-C/Ctrl-Z
    /// signals, no CR→LF translation; output processing (LF→CRLF) stays, as in linenoise.
    static func enterRaw() {
        var raw = original.pointee
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        apply(raw)
        if !pasteMode.exchange(true, ordering: .acquiringAndReleasing) {
            write("\u{1B}[?2004h")  // bracketed paste: pasted text arrives between markers
        }
    }

    /// While an answer streams: Ctrl-C is SIGINT (it stops the answer); keys typed ahead are
    /// neither echoed into the answer nor edited by the line discipline (Backspace, Ctrl-D),
    /// so the editor gets them as typed. NOFLSH: the signal must not flush the terminal's
    /// queues, which dropped answer text already written (but kept in the conversation) and
    /// keys typed ahead.
    static func enterAnswer() {
        var quiet = original.pointee
        quiet.c_lflag &= ~tcflag_t(ECHO | ICANON)
        quiet.c_lflag |= tcflag_t(NOFLSH)
        apply(quiet)
    }

    /// Puts back the settings phikit found.
    static func restore() {
        guard changed.exchange(false, ordering: .acquiringAndReleasing) else { return }
        if pasteMode.exchange(false, ordering: .acquiringAndReleasing) {
            write("\u{1B}[?2004l")
        }
        _ = tcsetattr(STDIN_FILENO, TCSANOW, original)
        current.pointee = original.pointee
    }

    /// The same from a signal handler: no allocation, no locks.
    static func restoreFromSignal() {
        guard changed.exchange(false, ordering: .acquiringAndReleasing) else { return }
        if pasteMode.exchange(false, ordering: .acquiringAndReleasing) {
            let off: StaticString = "\u{1B}[?2004l"
            _ = systemWrite(STDOUT_FILENO, off.utf8Start, off.utf8CodeUnitCount)
        }
        _ = tcsetattr(STDIN_FILENO, TCSANOW, original)
    }

    /// Ctrl-Z at the prompt (a key in raw mode) or SIGTSTP: the shell gets its terminal back
    /// while we are stopped, and our mode returns when we continue.
    static func suspendSelf() {
        let wasChanged = changed.load(ordering: .acquiring)
        if wasChanged { _ = tcsetattr(STDIN_FILENO, TCSANOW, original) }
        _ = signal(SIGTSTP, SIG_DFL)
        _ = raise(SIGTSTP)  // stops here until SIGCONT
        _ = signal(SIGTSTP, suspend)
        if wasChanged { _ = tcsetattr(STDIN_FILENO, TCSANOW, current) }
    }

    private static func apply(_ settings: termios) {
        var settings = settings
        current.pointee = settings
        changed.store(true, ordering: .releasing)
        _ = tcsetattr(STDIN_FILENO, TCSANOW, &settings)
    }

    private static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in _ = systemWrite(STDOUT_FILENO, bytes.baseAddress, bytes.count) }
    }
}

/// Nonisolated global functions on purpose (see `handleInterrupt`): a closure here would
/// check main-actor isolation, which allocates.
private func restoreAndDie(_ number: Int32) {
    TerminalMode.restoreFromSignal()
    _ = signal(number, SIG_DFL)
    _ = raise(number)
}

/// write(2), under a name that does not clash with `TerminalMode.write`.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer?, _ count: Int) -> Int {
    write(fd, bytes, count)
}

private func suspend(_: Int32) {
    TerminalMode.suspendSelf()
}

import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C: a job that can stop cleanly (see `Cancellation`) is asked to, and exits 130 after
/// removing its partial output; anything else — or a second Ctrl-C — exits 130 at once, which
/// is safe because writers go through `*.incomplete` files and rename only when done.
enum InterruptHandler {
    static func install() {
        Cancellation.prepareForSignalHandler()
        AnswerInterrupt.prepareForSignalHandler()
        TerminalMode.prepareForSignalHandler()
        signal(SIGINT, handleInterrupt)
        // A parent may hand us a mask with SIGINT blocked (Foundation's Process spawns children
        // with its worker thread's mask); then Ctrl-C would stay pending forever.
        var interruptOnly = sigset_t()
        sigemptyset(&interruptOnly)
        sigaddset(&interruptOnly, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &interruptOnly, nil)
    }
}

/// Runs on whichever thread the signal lands on, possibly in the middle of malloc, so it may
/// only do async-signal-safe work: atomics and `_exit`. It is a nonisolated global function on
/// purpose: a closure written in main.swift is main-actor isolated, and Swift 6 checks that
/// isolation on entry by creating the concurrency runtime's executors — which allocates, and
/// deadlocked a convert that Ctrl-C caught inside malloc (about one run in ten).
private func handleInterrupt(_: Int32) {
    if AnswerInterrupt.request() { return }  // chat: stop this answer, keep chatting
    if !Cancellation.interrupt() {
        TerminalMode.restoreFromSignal()
        _exit(130)
    }
}

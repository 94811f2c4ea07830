import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ctrl-C (and SIGTERM, SIGHUP): a job that can stop cleanly (see `InterruptibleJob`) is asked
/// to, and exits 130 after removing its partial output; anything else — or a second signal —
/// exits at once (130 for Ctrl-C, 128 + the signal otherwise), which is safe because writers
/// go through `*.incomplete` files and rename only when done.
enum InterruptHandler {
    static func install() {
        InterruptibleJob.prepareForSignalHandler()
        TerminalMode.prepareForSignalHandler()
        // SIGTERM (kill, systemd, a CI timeout) and SIGHUP (the terminal closed) stop a job the
        // same way: a convert killed by them used to leave `<out>.incomplete-*` behind.
        for stopSignal in [SIGINT, SIGTERM, SIGHUP] { signal(stopSignal, handleInterrupt) }
        // A parent may hand us a mask with SIGINT blocked (Foundation's Process spawns children
        // with its worker thread's mask); then Ctrl-C would stay pending forever.
        var stopSignals = sigset_t()
        sigemptyset(&stopSignals)
        for stopSignal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&stopSignals, stopSignal) }
        pthread_sigmask(SIG_UNBLOCK, &stopSignals, nil)
    }
}

/// Runs on whichever thread the signal lands on, possibly in the middle of malloc, so it may
/// only do async-signal-safe work: atomics and `_exit`. It is a nonisolated global function on
/// purpose: a closure written in main.swift is main-actor isolated, and Swift 6 checks that
/// isolation on entry by creating the concurrency runtime's executors — which allocates, and
/// deadlocked a convert that Ctrl-C caught inside malloc (about one run in ten).
private func handleInterrupt(_ signal: Int32) {
    if !InterruptibleJob.request(signal: signal) {
        TerminalMode.restoreFromSignal()  // chat: the user's terminal settings come back
        _exit(signal == SIGINT ? 130 : 128 + signal)
    }
}

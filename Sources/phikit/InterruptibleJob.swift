import PhiFormats
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The job Ctrl-C stops: whatever runs inside `run` gets a fresh `CancellationToken`, and the
/// signal handler cancels that token instead of ending the process. The job looks at its
/// token between units of work, unwinds through its own cleanup (a convert removes its
/// temporary folder) and the command exits 130. With no job running, the handler exits at once
/// — safe, because every writer goes through a temporary file renamed only when done.
///
/// Two kinds: a `.job` (convert, pull, verify, run) stops on SIGINT, SIGTERM or SIGHUP, and a
/// second signal while it is still stopping exits at once; an `.answer` (one reply of `chat`)
/// stops on Ctrl-C only, as often as it is pressed, and the conversation goes on.
enum InterruptibleJob {
    enum Kind { case job, answer }

    /// The running job's token as a raw pointer; 0 when none runs.
    private static let current = Atomic<UInt>(0)
    private static let answerOnly = Atomic<Bool>(false)
    /// Keeps the last token alive until the next job starts, so a handler that read the
    /// pointer just as its job ended still cancels a live object.
    nonisolated(unsafe) private static var lastToken: CancellationToken?

    /// Initializes the atomics now, before the handler can run. Swift initializes statics
    /// lazily under a once-lock; a signal arriving while the interrupted thread is inside that
    /// first initialization would make the handler wait on a lock its own thread holds.
    static func prepareForSignalHandler() {
        _ = current.load(ordering: .relaxed)
        _ = answerOnly.load(ordering: .relaxed)
    }

    /// From the signal handler (atomics only: async-signal-safe). True when a running job was
    /// asked to stop and will end by itself; false when the caller should exit now.
    static func request(signal: Int32) -> Bool {
        let bits = current.load(ordering: .acquiring)
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return false }
        // cancel() and isCancelled are single atomic operations.
        let token = Unmanaged<CancellationToken>.fromOpaque(pointer).takeUnretainedValue()
        if answerOnly.load(ordering: .acquiring) {
            guard signal == SIGINT else { return false }
            token.cancel()
            return true
        }
        if token.isCancelled { return false }
        token.cancel()
        return true
    }

    /// Runs `body` as the job Ctrl-C stops, with its token. A job started inside another one
    /// (a nested call) takes over until it ends, then the outer one is stoppable again.
    static func run<T>(_ kind: Kind = .job, _ body: (CancellationToken) throws -> T) rethrows -> T {
        let token = CancellationToken()
        lastToken = token
        let outerKind = answerOnly.exchange(kind == .answer, ordering: .acquiringAndReleasing)
        let outer = current.exchange(
            UInt(bitPattern: Unmanaged.passUnretained(token).toOpaque()),
            ordering: .acquiringAndReleasing)
        defer {
            current.store(outer, ordering: .releasing)
            answerOnly.store(outerKind, ordering: .releasing)
        }
        return try body(token)
    }

    /// `run` for a PhiKit job whose options carry its token: `body` gets a copy of `options`
    /// holding this run's token.
    static func run<Options: CancellableOptions, T>(
        _ options: Options, _ body: (Options) throws -> T
    ) rethrows -> T {
        try run { cancel in
            var options = options
            options.cancellation = cancel
            return try body(options)
        }
    }

    /// `run(options)` for a job that reports on one line of stderr: `line` words each report
    /// (`Diagnostics.progress`), and the line is cleared when the job ends, however it ends.
    static func run<Options: CancellableOptions, Progress, T>(
        _ options: Options, progressLine line: @escaping (Progress) -> String,
        _ body: (Options, (Progress) -> Void) throws -> T
    ) rethrows -> T {
        defer { Diagnostics.endProgress() }
        return try run(options) { try body($0) { Diagnostics.progress(line($0)) } }
    }
}

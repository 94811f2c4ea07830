import Synchronization

/// Ctrl-C as a request, for jobs that can stop cleanly.
///
/// The executable's SIGINT handler calls `interrupt()`. While a job runs inside `cancellable`,
/// the first Ctrl-C only sets a flag: the job notices it at its next `check()`, throws
/// `Interrupted`, and unwinds through its own cleanup (a convert removes its temporary
/// directory). Outside such a job, or on a second Ctrl-C, `interrupt()` answers false and the
/// handler exits at once — nothing a job writes is visible before its final rename anyway.
public enum Cancellation {
    private static let cooperativeJobs = Atomic<Int>(0)
    private static let requested = Atomic<Bool>(false)

    /// Called from the SIGINT handler (lock-free atomics only: async-signal-safe).
    /// Returns true when a running job will stop by itself, false when the caller should exit.
    public static func interrupt() -> Bool {
        guard cooperativeJobs.load(ordering: .acquiring) > 0 else { return false }
        let alreadyRequested = requested.exchange(true, ordering: .acquiringAndReleasing)
        return !alreadyRequested
    }

    /// Initializes the flags now, before the SIGINT handler can run. Swift initializes statics
    /// lazily under a once-lock; a signal arriving while the interrupted thread is inside that
    /// first initialization would make the handler wait on a lock its own thread holds. Call
    /// before installing the handler.
    public static func prepareForSignalHandler() {
        _ = cooperativeJobs.load(ordering: .relaxed)
        _ = requested.load(ordering: .relaxed)
    }

    public static var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Throws `Interrupted` once Ctrl-C was pressed; call between units of work.
    public static func check() throws(Interrupted) {
        if isRequested { throw Interrupted() }
    }

    /// Runs `body` as a job that checks for cancellation itself.
    public static func cancellable<T>(_ body: () throws -> T) rethrows -> T {
        cooperativeJobs.add(1, ordering: .acquiringAndReleasing)
        defer { cooperativeJobs.subtract(1, ordering: .acquiringAndReleasing) }
        return try body()
    }
}

/// The job stopped because the user pressed Ctrl-C; its partial output has been removed.
public struct Interrupted: UserFacingError, Equatable {
    public init() {}
    public var message: String { "interrupted; nothing was written" }
    public var exitCode: ExitCode { .interrupted }
}

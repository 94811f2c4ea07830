import Synchronization

/// Ctrl-C while `chat` streams an answer stops that answer only: the SIGINT handler asks here
/// first, and only when no answer is running does Ctrl-C go on to end the process.
enum AnswerInterrupt {
    private static let answering = Atomic<Bool>(false)
    private static let requested = Atomic<Bool>(false)

    /// Touches the atomics before the handler can run (see `Cancellation`).
    static func prepareForSignalHandler() {
        _ = answering.load(ordering: .relaxed)
        _ = requested.load(ordering: .relaxed)
    }

    /// From the SIGINT handler: true when an answer was running and will stop.
    static func request() -> Bool {
        guard answering.load(ordering: .acquiring) else { return false }
        requested.store(true, ordering: .releasing)
        return true
    }

    static var isRequested: Bool { requested.load(ordering: .acquiring) }

    /// Runs `body` (one answer) so that Ctrl-C stops it instead of the process.
    static func during<T>(_ body: () throws -> T) rethrows -> T {
        requested.store(false, ordering: .releasing)
        answering.store(true, ordering: .releasing)
        defer { answering.store(false, ordering: .releasing) }
        return try body()
    }
}

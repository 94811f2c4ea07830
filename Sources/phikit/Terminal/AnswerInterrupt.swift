import PhiFormats
import Synchronization

/// Ctrl-C while `chat` streams an answer stops that answer only: the SIGINT handler cancels
/// the answer's own `CancellationToken` (a per-job token, not the process-wide
/// `Cancellation`), and only when no answer is running does Ctrl-C go on to end the process.
enum AnswerInterrupt {
    /// The running answer's token as a raw pointer; 0 when none runs.
    private static let current = Atomic<UInt>(0)
    /// Keeps the last token alive until the next answer starts, so a handler that read the
    /// pointer just as its answer ended still cancels a live object.
    nonisolated(unsafe) private static var lastToken: CancellationToken?

    /// Touches the atomic before the handler can run (see `Cancellation`).
    static func prepareForSignalHandler() {
        _ = current.load(ordering: .relaxed)
    }

    /// From the SIGINT handler: true when an answer was running and will stop.
    static func request() -> Bool {
        let bits = current.load(ordering: .acquiring)
        guard bits != 0, let pointer = UnsafeRawPointer(bitPattern: bits) else { return false }
        // cancel() is one atomic store: safe in a signal handler.
        Unmanaged<CancellationToken>.fromOpaque(pointer).takeUnretainedValue().cancel()
        return true
    }

    /// Runs `body` (one answer) with a fresh token that Ctrl-C cancels.
    static func during<T>(_ body: (CancellationToken) throws -> T) rethrows -> T {
        let token = CancellationToken()
        lastToken = token
        current.store(
            UInt(bitPattern: Unmanaged.passUnretained(token).toOpaque()), ordering: .releasing)
        defer { current.store(0, ordering: .releasing) }
        return try body(token)
    }
}

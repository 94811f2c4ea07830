import Synchronization

/// A request to stop one job (one answer of a chat, one server request), as opposed to the
/// process-wide `Cancellation` that Ctrl-C sets for convert and pull. The job checks
/// `isCancelled` between units of work (generation: between tokens); whoever owns the job —
/// a REPL's Ctrl-C, a server noticing that its client left — calls `cancel()` from any thread.
/// A token is used once: make a new one for the next job.
public final class CancellationToken: Sendable {
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    /// Lock-free: safe from a signal handler once the token exists.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
}

import Synchronization

/// A request to stop one job: a convert, a pull, a verify, one `run`, one answer of a chat,
/// one server request. It is phikit's only cancellation mechanism: libraries hold no
/// process-wide flag, they take a token and look at it between units of work (a tensor, a
/// chunk of a download, a generated token). Whoever owns the job — the executable's Ctrl-C
/// handler, a REPL, a server noticing that its client left — calls `cancel()`, from any
/// thread. A token is used once: make a new one for the next job.
public final class CancellationToken: Sendable {
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    /// Lock-free: safe from a signal handler once the token exists.
    public func cancel() { cancelled.store(true, ordering: .releasing) }

    public var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    /// Throws `Interrupted` once the job was cancelled; call between units of work.
    public func check() throws(Interrupted) {
        if isCancelled { throw Interrupted() }
    }
}

extension Optional where Wrapped == CancellationToken {
    /// False for a job nobody can cancel.
    public var isCancelled: Bool { self?.isCancelled ?? false }

    /// As `CancellationToken.check()`; never throws for a job nobody can cancel.
    public func check() throws(Interrupted) { try self?.check() }
}

/// The job stopped because it was cancelled (Ctrl-C); its partial output has been removed.
public struct Interrupted: UserFacingError, Equatable {
    public init() {}
    public var message: String { "interrupted; nothing was written" }
    public var exitCode: ExitCode { .interrupted }
}

/// A job's options that carry its token, so that whoever starts the job (the CLI's Ctrl-C
/// handler) can give each run a fresh one without knowing which job it is.
public protocol CancellableOptions {
    var cancellation: CancellationToken? { get set }
}

/// Every error phikit's libraries throw conforms to this, so the executable can print one
/// `error: …` line, an optional `hint: …` line, and exit with the right code. Libraries never
/// print or exit themselves.
public protocol UserFacingError: Error, CustomStringConvertible {
    /// One line naming the thing (file, tensor, field, URL) and the problem.
    var message: String { get }
    /// What the user can do about it, if anything useful can be said.
    var hint: String? { get }
    var exitCode: ExitCode { get }
}

extension UserFacingError {
    public var hint: String? { nil }
    public var description: String { message }
}

/// Process exit codes (sysexits, as swift-argument-parser uses them; DESIGN.md wins where
/// it says otherwise).
public enum ExitCode: Int32, Sendable {
    case success = 0
    /// A check failed (for example a `verify` mismatch), or a generic failure.
    case failure = 1
    /// EX_USAGE: bad flag, missing value, bad number.
    case usage = 64
    /// EX_DATAERR: bad or unsupported model data (corrupt safetensors, bad config.json).
    case dataError = 65
    /// EX_NOINPUT: not in the cache, the registry, or on disk.
    case noInput = 66
    /// EX_UNAVAILABLE: network or HTTP failure.
    case unavailable = 69
    /// EX_SOFTWARE: an internal bug.
    case software = 70
    /// EX_IOERR: local I/O (disk full, permission, rename failed).
    case ioError = 74
    /// Interrupted by SIGINT (128 + 2).
    case interrupted = 130
}

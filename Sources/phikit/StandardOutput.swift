import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Results on stdout, written straight to the descriptor so that a failed write is seen.
/// `print` buffers through stdio and drops errors: with a full disk or `> /dev/full` every
/// command used to exit 0 having written nothing.
///
/// A write error is a `StandardOutputError` (exit 74 with `error:`); a reader that went away
/// (EPIPE, `phikit list | head -1`) is `StandardOutputClosed`, which the dispatcher turns into
/// a quiet exit 74 — as a Unix tool stops silently on SIGPIPE. main.swift ignores SIGPIPE so
/// the write returns EPIPE instead of killing the process.
enum StandardOutput {
    static func print(_ value: some CustomStringConvertible, terminator: String = "\n") throws {
        var bytes = Array(value.description.utf8)
        bytes.append(contentsOf: terminator.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                write(STDOUT_FILENO, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if n < 0 {
                if errno == EINTR { continue }
                if errno == EPIPE { throw StandardOutputClosed() }
                throw StandardOutputError(errno: errno)
            }
            if n == 0 { throw StandardOutputError(errno: EIO) }
            offset += n
        }
    }
}

/// stdout could not be written (a full disk, `/dev/full`, an I/O error).
struct StandardOutputError: UserFacingError {
    var errno: Int32
    var message: String { "cannot write to standard output: " + String(cString: strerror(errno)) }
    var exitCode: ExitCode { .ioError }
}

/// The reader of stdout is gone (EPIPE): stop quietly.
struct StandardOutputClosed: Error {}

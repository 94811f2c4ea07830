import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a path, held from `acquire` until `release` (or the process dies).
///
/// The lock is `flock(2)` on the file — what huggingface_hub's `filelock` takes on
/// `.locks/models--…/<blob>.lock`, so phikit and huggingface_hub never download the same blob at
/// once. flock belongs to the open file, so a holder that is killed (even with `kill -9`)
/// releases it: a leftover lock file is never stale. The holder's PID is written into the file
/// for messages ("held by pid 4242").
///
/// On file systems without flock (some NFS mounts: ENOLCK, EOPNOTSUPP) it falls back to an
/// exclusive-create lock file holding `pid@host`; one left by a process that no longer exists
/// on this host is recognised as stale and taken over (huggingface_hub #2543, #2399).
public final class FileLock {
    public let path: String
    private var fd: Int32 = -1
    private var softLock = false

    public enum Mode: Sendable { case automatic, exclusiveCreate }
    private let mode: Mode

    public init(path: String, mode: Mode = .automatic) {
        self.path = path
        self.mode = mode
    }

    deinit { release() }

    /// Takes the lock if it is free right now. Throws only for I/O problems.
    public func tryAcquire() throws(FileError) -> Bool {
        if mode == .automatic {
            let opened = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o664)
            guard opened >= 0 else {
                throw FileError(path: path, operation: "open lock", errno: errno)
            }
            if flock(opened, LOCK_EX | LOCK_NB) == 0 {
                fd = opened
                writeHolder()
                return true
            }
            let code = errno
            close(opened)
            if code == EWOULDBLOCK || code == EINTR { return false }
            guard code == ENOLCK || code == EOPNOTSUPP || code == ENOSYS else {
                throw FileError(path: path, operation: "lock", errno: code)
            }
        }
        return try tryExclusiveCreate()
    }

    /// Waits for the lock, polling every 50 ms for at most `timeout` seconds;
    /// `waiting` is told (once) who holds it. Returns false on timeout or once `cancellation`
    /// is cancelled.
    public func acquire(
        timeout: Double, cancellation: CancellationToken? = nil,
        waiting: (String?) -> Void = { _ in }
    ) throws(FileError) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var told = false
        while true {
            if try tryAcquire() { return true }
            if !told {
                waiting(holder)
                told = true
            }
            if Date() >= deadline || cancellation.isCancelled { return false }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    public func release() {
        guard fd >= 0 else { return }
        if softLock {
            unlink(path)
        } else {
            _ = ftruncate(fd, 0)  // the PID inside would mislead whoever takes the lock next
            flock(fd, LOCK_UN)
        }
        close(fd)
        fd = -1
    }

    /// What the lock file says about its holder (`pid 4242@host`), if anything.
    public var holder: String? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : "pid " + text
    }

    private func writeHolder() {
        let text = Array("\(getpid())@\(Self.hostName)\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }

    /// The fallback: create the file exclusively; a file naming a dead local process is stale.
    private func tryExclusiveCreate() throws(FileError) -> Bool {
        for _ in 0..<2 {
            let opened = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o664)
            if opened >= 0 {
                fd = opened
                softLock = true
                writeHolder()
                return true
            }
            guard errno == EEXIST else {
                throw FileError(path: path, operation: "create lock", errno: errno)
            }
            guard Self.holderIsGone(path) else { return false }
            unlink(path)  // stale: its process is gone; try once more
        }
        return false
    }

    /// A lock file written by a process of this host that no longer runs.
    static func holderIsGone(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: path) else { return true }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines)
        let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
        guard parts.count == 2, let pid = Int32(parts[0]), pid > 0, parts[1] == hostName else {
            return false  // another host's lock, or unreadable: not ours to judge
        }
        return kill(pid, 0) != 0 && errno == ESRCH
    }

    static let hostName: String = {
        var buffer = [UInt8](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "localhost" }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }()
}

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive `flock` on a directory, held by a job for as long as it writes into that
/// directory (convert's `<out>.incomplete-XXXXXX`), so that a cleanup can tell the folder of a
/// live job from one a killed job left behind: the kernel drops the lock when the holder dies.
public final class DirectoryLock {
    private var fd: Int32

    /// Locks `path`; nil when another process holds the lock (or the folder cannot be opened).
    public init?(path: String) {
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            return nil
        }
    }

    deinit { release() }

    public func release() {
        guard fd >= 0 else { return }
        close(fd)  // closing the last descriptor releases the flock
        fd = -1
    }
}

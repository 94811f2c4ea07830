#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file atomic writes: readers see either the old file or the complete new one, never a
/// partial one, even across a crash (DESIGN.md: "Writes are atomic").
public enum AtomicFile {
    /// Writes `bytes` to `<path>.incomplete`, fsyncs it, renames it over `path`, then fsyncs
    /// the directory so the rename itself is durable. On failure the partial file is removed.
    public static func write(_ bytes: some Collection<UInt8>, to path: String) throws(FileError) {
        let temp = path + ".incomplete"
        let fd = try POSIXFile.create(temp)
        do {
            func writeAll(_ raw: UnsafeRawBufferPointer) -> Result<Void, FileError> {
                Result { () throws(FileError) in try POSIXFile.writeAll(fd, raw, path: temp) }
            }
            let written = bytes.withContiguousStorageIfAvailable {
                writeAll(UnsafeRawBufferPointer($0))
            }
            try (written ?? Array(bytes).withUnsafeBytes(writeAll)).get()
            try POSIXFile.sync(fd, path: temp)
            try POSIXFile.close(fd, path: temp)
        } catch {
            _ = system_close(fd)
            unlink(temp)
            throw error
        }
        do {
            try POSIXFile.rename(temp, to: path)
        } catch {
            unlink(temp)
            throw error
        }
        try POSIXFile.syncDirectory(containing: path)
    }
}

/// Thin wrappers over the system calls the writers need: each retries on EINTR and turns -1
/// into a `FileError` naming the path (the swift-system `valueOrErrno` pattern). Public for
/// PhiHub's blob writer, which streams downloads through the same calls.
public enum POSIXFile {
    /// Creates (or truncates) `path` for writing, mode 0644 before umask.
    static func create(_ path: String) throws(FileError) -> Int32 {
        while true {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            if fd >= 0 { return fd }
            if errno != EINTR { throw FileError(path: path, operation: "create", errno: errno) }
        }
    }

    /// Reserves `length` bytes of disk for `fd` up front, so a full disk is reported before
    /// any data is written (not gigabytes later) and the file system allocates its extents
    /// in one go. File systems that cannot preallocate (EOPNOTSUPP) are simply written to.
    static func preallocate(_ fd: Int32, length: Int, path: String) throws(FileError) {
        guard length > 0 else { return }
        while true {
            let result = posix_fallocate(fd, 0, off_t(length))  // returns the error, not -1
            if result == 0 || result == EOPNOTSUPP || result == EINVAL { return }
            if result != EINTR { throw FileError(path: path, operation: "reserve space for", errno: result) }
        }
    }

    /// Writes all of `buffer`, looping over short writes and EINTR.
    public static func writeAll(
        _ fd: Int32, _ buffer: UnsafeRawBufferPointer, path: String
    ) throws(FileError) {
        guard var p = buffer.baseAddress else { return }
        var remaining = buffer.count
        while remaining > 0 {
            // Linux writes at most ~2 GB per call; ask for less so the count fits everywhere.
            let n = system_write(fd, p, min(remaining, 1 << 30))
            if n < 0 {
                if errno == EINTR { continue }
                throw FileError(path: path, operation: "write", errno: errno)
            }
            if n == 0 { throw FileError(path: path, operation: "write", errno: EIO) }
            p += n
            remaining -= n
        }
    }

    public static func sync(_ fd: Int32, path: String) throws(FileError) {
        while fsync(fd) != 0 {
            if errno != EINTR { throw FileError(path: path, operation: "fsync", errno: errno) }
        }
    }

    /// Closes `fd`. A failing close can report a delayed write error, so it is checked; EINTR
    /// is not retried (on Linux the descriptor is already released).
    static func close(_ fd: Int32, path: String) throws(FileError) {
        if system_close(fd) != 0 && errno != EINTR {
            throw FileError(path: path, operation: "close", errno: errno)
        }
    }

    public static func rename(_ from: String, to: String) throws(FileError) {
        if system_rename(from, to) != 0 {
            throw FileError(path: to, operation: "rename '\(from)' to", errno: errno)
        }
    }

    /// fsyncs the directory holding `path`, so a rename into it survives a crash.
    public static func syncDirectory(containing path: String) throws(FileError) {
        let dir: String
        if let slash = path.lastIndex(of: "/") {
            dir = slash == path.startIndex ? "/" : String(path[..<slash])
        } else {
            dir = "."
        }
        let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: dir, operation: "open directory", errno: errno) }
        defer { _ = system_close(fd) }
        // Some file systems can't fsync a directory (EINVAL); the rename is still done.
        while fsync(fd) != 0 {
            if errno == EINTR { continue }
            if errno == EINVAL || errno == ENOTSUP { return }
            throw FileError(path: dir, operation: "fsync directory", errno: errno)
        }
    }
}

// Free functions that reach the C calls from inside `POSIXFile`, whose own `close`, `rename`
// shadow them (swift-system names these the same way).
@inline(__always) func system_close(_ fd: Int32) -> Int32 { close(fd) }
@inline(__always) func system_write(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    write(fd, p, n)
}
@inline(__always) func system_rename(_ a: String, _ b: String) -> Int32 { rename(a, b) }

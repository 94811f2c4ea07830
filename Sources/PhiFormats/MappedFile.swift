#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call on a local file: which file, what we were doing, and errno.
public struct FileError: UserFacingError, Equatable {
    public let path: String
    /// What we were doing, as a verb phrase: "open", "read", "write", "rename … to", "fsync".
    public let operation: String
    public let errno: Int32

    public init(path: String, operation: String, errno: Int32) {
        self.path = path
        self.operation = operation
        self.errno = errno
    }

    public var message: String {
        "cannot \(operation) '\(path)': \(String(cString: strerror(errno)))"
    }

    public var hint: String? {
        switch errno {
        case ENOSPC: "free some disk space and run the command again"
        case EACCES, EPERM: "check the file's permissions"
        default: nil
        }
    }

    /// A missing file is "no input" (66); anything else is local I/O (74).
    public var exitCode: ExitCode { errno == ENOENT ? .noInput : .ioError }
}

/// A whole file mapped read-only into memory; unmapped in `deinit`.
///
/// Weights are read through this so that the kernel pages them in on demand and can drop them
/// again (`dropPages`), which keeps a streaming convert's RSS near one tensor.
/// The mapping is immutable after `init`, so sharing it between threads is safe.
public final class MappedFile: @unchecked Sendable {
    public let path: String
    private let base: UnsafeRawPointer?
    private let count: Int

    /// Maps `path` read-only. An empty file maps to an empty buffer without calling `mmap`.
    public init(path: String) throws(FileError) {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }  // the mapping keeps its own reference to the file

        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw FileError(path: path, operation: "stat", errno: errno)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            let code = (info.st_mode & S_IFMT) == S_IFDIR ? EISDIR : EINVAL
            throw FileError(path: path, operation: "map", errno: code)
        }
        guard info.st_size > 0 else {
            base = nil
            count = 0
            return
        }
        guard let size = Int(exactly: info.st_size) else {
            throw FileError(path: path, operation: "map", errno: EFBIG)
        }
        let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
        guard let p, p != MAP_FAILED else {
            throw FileError(path: path, operation: "map", errno: errno)
        }
        base = UnsafeRawPointer(p)
        count = size
    }

    deinit {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    /// The file's bytes. Valid as long as this object is alive.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Tells the kernel it may drop the pages that lie entirely inside `range` (clamped to the
    /// file; rounded inward to page boundaries so neighbouring data keeps its pages). The bytes
    /// stay readable: they are paged in again from the file on the next access.
    public func dropPages(_ range: Range<Int>) {
        guard let base else { return }
        let page = MappedFile.pageSize
        let lower = max(0, range.lowerBound)
        let upper = min(count, range.upperBound)
        let start = (lower + page - 1) / page * page
        let end = upper == count ? (count + page - 1) / page * page : upper / page * page
        guard start < end else { return }
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_DONTNEED)
    }

    /// Asks the kernel to start reading `range` (clamped to the file, rounded outward to pages).
    public func willNeed(_ range: Range<Int>) {
        guard let base else { return }
        let page = MappedFile.pageSize
        let lower = max(0, range.lowerBound)
        let upper = min(count, range.upperBound)
        guard lower < upper else { return }
        let start = lower / page * page
        let end = (upper + page - 1) / page * page
        madvise(UnsafeMutableRawPointer(mutating: base + start), end - start, MADV_WILLNEED)
    }

    static let pageSize: Int = {
        let size = sysconf(Int32(_SC_PAGESIZE))
        return size > 0 ? size : 4096
    }()
}

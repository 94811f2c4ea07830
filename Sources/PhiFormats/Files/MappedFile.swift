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
    /// What the path is when a regular file was expected ("a directory", "a FIFO").
    public let wrongType: String?

    public init(path: String, operation: String, errno: Int32, wrongType: String? = nil) {
        self.path = path
        self.operation = operation
        self.errno = errno
        self.wrongType = wrongType
    }

    public var message: String {
        if let wrongType { return "'\(path)' is \(wrongType), not a regular file" }
        return "cannot \(operation) '\(path)': \(String(cString: strerror(errno)))"
    }

    public var hint: String? {
        switch errno {
        case ENOSPC: "free some disk space and run the command again"
        case EACCES, EPERM: "check the file's permissions"
        default: nil
        }
    }

    /// A missing file is "no input" (66); a directory, FIFO or device where a model file
    /// belongs is bad model data (65), whichever file it is; anything else is local I/O (74).
    public var exitCode: ExitCode {
        if wrongType != nil { return .dataError }
        return errno == ENOENT ? .noInput : .ioError
    }

}

/// Whole small files (JSON metadata, templates, prompts) read with the same checks everywhere:
/// a regular file, at most `limit` bytes, read without blocking on a FIFO, every failure a
/// `FileError` that names the file (Foundation's messages said "NSCocoaErrorDomain error 256"
/// or "You don't have permission" to root for a directory).
public enum LocalFile {
    /// 1 GiB: far above any tokenizer.json (Phi-4's is 15 MB) or config.
    public static let defaultLimit = 1 << 30

    /// Refuses anything but a regular file at `path` (following links), before it is opened:
    /// opening a FIFO blocks until a writer comes, reading a device never ends.
    public static func requireRegularFile(_ path: String) throws(FileError) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FileError(path: path, operation: "open", errno: Glibc.errno)
        }
        if let kind = nonRegularKind(info.st_mode) {
            throw FileError(path: path, operation: "open", errno: EINVAL, wrongType: kind)
        }
    }

    /// "a directory", "a FIFO"… for a mode that is not a regular file; nil for one.
    static func nonRegularKind(_ mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: nil
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        default: "not a file"
        }
    }

    public static func read(_ path: String, limit: Int = defaultLimit) throws(FileError) -> [UInt8]
    {
        try LocalFile.requireRegularFile(path)
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw FileError(path: path, operation: "stat", errno: errno)
        }
        if let kind = LocalFile.nonRegularKind(info.st_mode) {  // replaced since the stat
            throw FileError(path: path, operation: "open", errno: EINVAL, wrongType: kind)
        }
        guard info.st_size <= limit else {
            throw FileError(path: path, operation: "read", errno: EFBIG)
        }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let n = bytes.withUnsafeMutableBytes {
                system_read(fd, $0.baseAddress! + filled, $0.count - filled)
            }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw FileError(path: path, operation: "read", errno: errno) }
            if n == 0 { break }  // shrank while we read: what is there is the file
            filled += n
        }
        return filled == bytes.count ? bytes : Array(bytes[..<filled])
    }
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
        try LocalFile.requireRegularFile(path)  // before open(2): a FIFO would block it
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }  // the mapping keeps its own reference to the file

        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw FileError(path: path, operation: "stat", errno: errno)
        }
        if let kind = LocalFile.nonRegularKind(info.st_mode) {
            throw FileError(path: path, operation: "map", errno: EINVAL, wrongType: kind)
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

@inline(__always) private func system_read(
    _ fd: Int32, _ p: UnsafeMutableRawPointer, _ n: Int
) -> Int {
    read(fd, p, n)
}

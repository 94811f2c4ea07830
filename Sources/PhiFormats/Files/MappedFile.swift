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
    /// The mapping is advised into 2 MiB pages (`hugePages`): read-ahead would bring pages in
    /// small, so `willNeed` leaves them to the faults.
    private let advisedHuge: Bool
    /// Whether the kernel mapped the start of the file with a 2 MiB page (`hugePages`).
    public let isHugePageMapped: Bool

    /// Maps `path` read-only. An empty file maps to an empty buffer without calling `mmap`.
    ///
    /// `hugePages`: map it at a 2 MiB boundary in 2 MiB pages where the kernel can (Linux:
    /// MADV_HUGEPAGE, the page cache's 2 MiB folios mapped whole), for weights a model streams
    /// from end to end every token. Decode is bound by how fast the cores read memory, and
    /// 4 KiB pages cost a TLB miss (two page-table walks in a VM) every 4 KiB: one core summing
    /// Phi-4-mini's 2.2 GB file read 19-20 GB/s through 4 KiB pages and 29-31 through 2 MiB
    /// pages; 2 threads decoding it went from ~11.8 to ~16.3 tok/s. The page cache only makes
    /// 2 MiB folios when a fault through such a mapping reads the file in; when it already
    /// holds the file in small folios (read by a copy, a checksum, read-ahead), those are
    /// dropped (the ones no process maps) and read again from disk, once: later loads find the
    /// large folios and map them at once.
    public init(path: String, hugePages: Bool = false) throws(FileError) {
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
            advisedHuge = false
            isHugePageMapped = false
            return
        }
        guard let size = Int(exactly: info.st_size) else {
            throw FileError(path: path, operation: "map", errno: EFBIG)
        }
        let huge = hugePages && size >= Self.hugePageSize
        var p = try Self.map(fd, size, path: path, aligned: huge)
        var mapped = false
        #if os(Linux)
            if huge && madvise(p, size, 14) == 0 {  // MADV_HUGEPAGE
                mapped = Self.probeHugePage(p)
                if !mapped {  // small folios in the page cache: drop them, map again
                    munmap(p, size)
                    _ = posix_fadvise(fd, 0, off_t(size), POSIX_FADV_DONTNEED)
                    p = try Self.map(fd, size, path: path, aligned: true)
                    _ = madvise(p, size, 14)
                    mapped = Self.probeHugePage(p)
                }
            }
        #endif
        base = UnsafeRawPointer(p)
        count = size
        advisedHuge = huge
        isHugePageMapped = mapped
    }

    deinit {
        if let base { munmap(UnsafeMutableRawPointer(mutating: base), count) }
    }

    static let hugePageSize = 2 << 20

    /// Anonymous, private memory of `size` bytes (a multiple of the page size) at a 2 MiB
    /// boundary, so that every 2 MiB of it can be one page: reserved 2 MiB larger, the ends
    /// returned. A file mapped over it (`map`) or weights copied into it (`ResidentFile`).
    static func reserveHugeAligned(
        _ size: Int, protection: Int32, path: String, operation: String
    ) throws(FileError) -> UnsafeMutableRawPointer {
        let span = size + hugePageSize
        let reserved = mmap(nil, span, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        guard let reserved, reserved != MAP_FAILED else {
            throw FileError(path: path, operation: operation, errno: errno)
        }
        let lead = (hugePageSize - Int(bitPattern: reserved) % hugePageSize) % hugePageSize
        if lead > 0 { munmap(reserved, lead) }
        let tail = span - lead - size
        if tail > 0 { munmap(reserved + lead + size, tail) }
        return reserved + lead
    }

    /// mmap of the whole file, read-only; `aligned`: at a 2 MiB boundary, so that 2 MiB of
    /// the file can lie in one page (an address reserved 2 MiB larger, then the file mapped
    /// over its aligned part and the rest returned).
    private static func map(_ fd: Int32, _ size: Int, path: String, aligned: Bool) throws(FileError)
        -> UnsafeMutableRawPointer
    {
        guard aligned else {
            let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0)
            guard let p, p != MAP_FAILED else {
                throw FileError(path: path, operation: "map", errno: errno)
            }
            return p
        }
        let reservedSize = (size + pageSize - 1) / pageSize * pageSize
        let start = try reserveHugeAligned(
            reservedSize, protection: PROT_NONE, path: path, operation: "map")
        let p = mmap(start, size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0)
        guard let p, p != MAP_FAILED else {
            let failure = errno
            munmap(start, reservedSize)
            throw FileError(path: path, operation: "map", errno: failure)
        }
        return p
    }

    /// Faults in the mapping's first 2 MiB (MADV_POPULATE_READ) and says whether the kernel
    /// mapped them as one page: this new mapping's FilePmdMapped is no longer 0 (Linux only,
    /// else false).
    private static func probeHugePage(_ p: UnsafeMutableRawPointer) -> Bool {
        guard madvise(p, hugePageSize, 22) == 0 else { return false }  // MADV_POPULATE_READ
        return (filePmdMappedKB(mappingAt: p) ?? 0) > 0
    }

    /// FilePmdMapped of the one mapping that starts at `start`, from /proc/self/smaps (nil if
    /// no mapping starts there, or not Linux). A mapping's entry is its address line, then
    /// its fields, the last of them VmFlags.
    static func filePmdMappedKB(mappingAt start: UnsafeRawPointer) -> Int? {
        let digits = String(UInt(bitPattern: start), radix: 16)
        let header = String(repeating: "0", count: max(0, 8 - digits.count)) + digits + "-"
        var inside = false
        for line in procText("/proc/self/smaps").split(separator: "\n") {
            if !inside {
                inside = line.hasPrefix(header)
            } else if line.hasPrefix("FilePmdMapped:") {
                return kilobytes(line)
            } else if line.hasPrefix("VmFlags:") {
                return 0
            }
        }
        return nil
    }

    /// "Key:   1234 kB" -> 1234.
    private static func kilobytes(_ line: Substring) -> Int {
        line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    }

    /// A /proc file read to its end ("" if it cannot be opened). A proc file says it is empty
    /// to stat, so LocalFile.read does not do.
    private static func procText(_ path: String) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return "" }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var filled = 0
        while true {
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let n = buffer.withUnsafeMutableBytes {
                system_read(fd, $0.baseAddress! + filled, $0.count - filled)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            filled += n
        }
        return String(decoding: buffer[..<filled], as: UTF8.self)
    }

    /// Bytes faulted in per call of `populate`, between cancellation checks: ~20 ms from a
    /// warm page cache, ~0.1 s from a disk.
    static let populateChunk = 64 << 20

    /// Faults the whole mapping in now, so a model's first token does not page it in from
    /// disk, and says how much of it the kernel could map in 2 MiB pages: the share of the
    /// whole 2 MiB pages the file spans (1 when it spans none). Where the page cache holds
    /// parts of the file in small folios (read by `cat` or a checksum, or paged out and read
    /// back in pieces: this host's DAMON pageout scheme reclaims unmapped file pages) those
    /// parts map in 4 KiB pages and decode streams them ~30% slower. nil where it cannot be
    /// known: not Linux, not mapped with `hugePages`, or MADV_POPULATE_READ refused (Linux
    /// < 5.14; the pages then come in on demand as before). `cancellation` is checked
    /// between chunks (`Interrupted`).
    public func populate(cancellation: CancellationToken?) throws -> Double? {
        #if os(Linux)
            guard let base, advisedHuge else { return nil }
            let mutableBase = UnsafeMutableRawPointer(mutating: base)
            for offset in stride(from: 0, to: count, by: Self.populateChunk) {
                try cancellation.check()
                let length = min(Self.populateChunk, count - offset)
                // MADV_POPULATE_READ (22); length need not be page-rounded.
                guard madvise(mutableBase + offset, length, 22) == 0 else { return nil }
            }
            let wholePages = count / Self.hugePageSize
            guard wholePages > 0 else { return 1 }
            guard let mappedKB = Self.filePmdMappedKB(mappingAt: base) else { return nil }
            return min(1, Double(mappedKB) * 1024 / Double(wholePages * Self.hugePageSize))
        #else
            return nil
        #endif
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
        guard let base, !advisedHuge else { return }  // read-ahead would make small folios
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

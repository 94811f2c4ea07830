import CKernels

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Streaming SHA-256: the Hub's LFS oid (`X-Linked-Etag`, `lfs.oid`) and the blob file name
/// in the HF cache. The C core uses SHA-NI when the CPU has it (see sha256.c).
public struct SHA256Hasher: Sendable {
    private var ctx = pk_sha256_ctx()

    public init() { pk_sha256_init(&ctx) }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        pk_sha256_update(&ctx, base, bytes.count)
    }

    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable {
            update(UnsafeRawBufferPointer($0))
        }
        if done == nil { Array(bytes).withUnsafeBytes { update($0) } }
    }

    /// The 32-byte digest. The hasher itself is left untouched (finalize works on a copy).
    public func finalize() -> [UInt8] {
        var copy = ctx
        var digest = [UInt8](repeating: 0, count: 32)
        pk_sha256_final(&copy, &digest)
        return digest
    }

    /// The digest as lowercase hex, the form the Hub and the HF cache use.
    public func finalizeHex() -> String { hexString(finalize()) }

    public static func hex(of bytes: some Collection<UInt8>) -> String {
        var hasher = SHA256Hasher()
        hasher.update(bytes)
        return hexString(hasher.finalize())
    }

    /// Hashes a file of any size in 8 MB reads; `progress` gets the bytes hashed so far.
    public static func hex(
        of file: String, progress: ((Int) -> Void)? = nil
    ) throws(ChecksumError)
        -> String
    {
        var hasher = SHA256Hasher()
        try streamFile(file, progress: progress) { hasher.update($0) }
        return hexString(hasher.finalize())
    }

    /// Whether the SHA-NI path is in use on this machine.
    public static var isAccelerated: Bool { pk_sha256_accelerated() != 0 }
}

/// Git's blob id: SHA-1 of `"blob <size>\0"` + content. The Hub's `ETag` for files not in LFS
/// and their blob name in the HF cache. An identifier, not a security check.
public struct GitBlobSHA1: Sendable {
    private var ctx = pk_sha1_ctx()

    /// Starts a blob of `size` bytes; feed exactly that many bytes with `update`.
    public init(size: Int) {
        pk_sha1_init(&ctx)
        let header = Array("blob \(size)\0".utf8)
        header.withUnsafeBytes { pk_sha1_update(&ctx, $0.baseAddress, $0.count) }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        pk_sha1_update(&ctx, base, bytes.count)
    }

    public func finalize() -> [UInt8] {
        var copy = ctx
        var digest = [UInt8](repeating: 0, count: 20)
        pk_sha1_final(&copy, &digest)
        return digest
    }

    /// The blob id as lowercase hex, the form the Hub and the HF cache use.
    public func finalizeHex() -> String { hexString(finalize()) }

    public static func hex(of bytes: [UInt8]) -> String {
        var hasher = GitBlobSHA1(size: bytes.count)
        bytes.withUnsafeBytes { hasher.update($0) }
        return hexString(hasher.finalize())
    }

    public static func hex(of file: String) throws(ChecksumError) -> String {
        let size = try fileSize(file)
        var hasher = GitBlobSHA1(size: size)
        var seen = 0
        try streamFile(file, progress: nil) {
            seen += $0.count
            hasher.update($0)
        }
        // The header promised `size` bytes; a file that changed under us would give a wrong id.
        guard seen == size else {
            throw .readFailed(path: file, detail: "file changed while hashing")
        }
        return hexString(hasher.finalize())
    }
}

/// A file could not be read for hashing.
public enum ChecksumError: UserFacingError, Equatable {
    case cannotOpen(path: String, errno: Int32)
    case readFailed(path: String, detail: String)

    public var message: String {
        switch self {
        case .cannotOpen(let path, let code):
            "cannot open \(path): \(String(cString: strerror(code)))"
        case .readFailed(let path, let detail): "cannot read \(path): \(detail)"
        }
    }

    public var exitCode: ExitCode {
        if case .cannotOpen(_, let code) = self, code == ENOENT { return .noInput }
        return .ioError
    }
}

func hexString(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out = [UInt8]()
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
        out.append(digits[Int(b >> 4)])
        out.append(digits[Int(b & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}

private func fileSize(_ path: String) throws(ChecksumError) -> Int {
    var st = stat()
    guard stat(path, &st) == 0 else { throw .cannotOpen(path: path, errno: errno) }
    return Int(st.st_size)
}

/// Reads `path` sequentially in 8 MB chunks (large enough that syscalls cost nothing next to
/// hashing, small enough to stay in cache) and hands each chunk to `body`.
private func streamFile(
    _ path: String, progress: ((Int) -> Void)?, _ body: (UnsafeRawBufferPointer) -> Void
) throws(ChecksumError) {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .cannotOpen(path: path, errno: errno) }
    defer { close(fd) }
    let chunk = 8 << 20
    let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 64)
    defer { buffer.deallocate() }
    var total = 0
    while true {
        let n = read(fd, buffer.baseAddress, chunk)
        if n < 0 {
            if errno == EINTR { continue }
            throw .readFailed(path: path, detail: String(cString: strerror(errno)))
        }
        if n == 0 { return }
        body(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        total += n
        progress?(total)
    }
}

import Foundation
import PhiEngine
import PhiFormats

/// The file a `KVSnapshot` is stored in (little-endian):
///
///     "PKKVSNAP"  u32 version  [32] fingerprint
///     u32 kv bits  u32 regime  u32 layers  u32 kv heads  u32 head dim
///     u64 token count  u64 row bytes
///     u32 tokens[token count]   u8 rows[row bytes]
///     [32] SHA-256 of everything before it
///
/// A reader checks the size the header promises and the checksum before trusting a byte, so
/// a truncated or damaged file is refused, never restored.
enum KVSnapshotFile {
    static let magic = Array("PKKVSNAP".utf8)
    static let version: UInt32 = 1
    static let headerBytes = 8 + 4 + 32 + 5 * 4 + 2 * 8

    /// Why a file was refused.
    struct Invalid: Error { let reason: String }

    static func header(_ snapshot: KVSnapshot, fingerprint: ModelFingerprint) -> [UInt8] {
        var out = magic
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { out += $0 } }
        func u64(_ v: Int) { withUnsafeBytes(of: UInt64(v).littleEndian) { out += $0 } }
        u32(Int(version))
        out += fingerprint.digest
        for v in [
            snapshot.cacheWidth.rawValue, snapshot.regime, snapshot.layers, snapshot.kvHeads,
            snapshot.headDim,
        ] { u32(v) }
        u64(snapshot.tokens.count)
        u64(snapshot.rows.count)
        return out
    }

    static func tokenBytes(_ tokens: [Int]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 * tokens.count)
        for t in tokens { withUnsafeBytes(of: UInt32(truncatingIfNeeded: t).littleEndian) { out += $0 } }
        return out
    }

    /// Writes `snapshot` to `path` (a new file; the caller renames it into place).
    static func write(
        _ snapshot: KVSnapshot, fingerprint: ModelFingerprint, to path: String
    ) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(path: path, operation: "create", errno: errno) }
        defer { close(fd) }
        var hasher = SHA256Hasher()
        func put(_ bytes: UnsafeRawBufferPointer) throws {
            hasher.update(bytes)
            try POSIXFile.writeAll(fd, bytes, path: path)
        }
        let head = header(snapshot, fingerprint: fingerprint) + tokenBytes(snapshot.tokens)
        try head.withUnsafeBytes { try put($0) }
        try snapshot.rows.withUnsafeBytes { try put($0) }
        let sum = hasher.finalize()
        try sum.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: path) }
        try POSIXFile.sync(fd, path: path)
    }

    /// Reads the snapshot in `path`, refusing (`Invalid`) a file of another fingerprint, a
    /// size other than its header promises, or a checksum that does not match.
    static func read(_ path: String, fingerprint: ModelFingerprint) throws -> KVSnapshot {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError(path: path, operation: "stat", errno: errno) }
        let size = Int(info.st_size)
        guard size >= headerBytes + 32 else { throw Invalid(reason: "shorter than its header") }
        var hasher = SHA256Hasher()
        let head = try readExactly(fd, headerBytes, path: path)
        hasher.update(head)
        guard Array(head[0..<8]) == magic else { throw Invalid(reason: "not a phikit KV file") }
        func u32(_ at: Int) -> Int {
            Int(head[at..<at + 4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) })
        }
        func u64(_ at: Int) -> Int {
            let v = head[at..<at + 8].enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * $1.offset) }
            return v > UInt64(Int.max / 8) ? Int.max / 8 : Int(v)
        }
        guard u32(8) == Int(version) else { throw Invalid(reason: "format version \(u32(8))") }
        guard Array(head[12..<44]) == fingerprint.digest else {
            throw Invalid(reason: "written for another model, cache width or engine")
        }
        guard let width = KVCacheWidth(rawValue: u32(44)) else {
            throw Invalid(reason: "unknown cache width \(u32(44))")
        }
        let (count, rowBytes) = (u64(64), u64(72))
        guard size == headerBytes + 4 * count + rowBytes + 32 else {
            throw Invalid(reason: "\(size) bytes where its header promises \(headerBytes + 4 * count + rowBytes + 32) (truncated?)")
        }
        let tokenData = try readExactly(fd, 4 * count, path: path)
        hasher.update(tokenData)
        let rows = try readExactly(fd, rowBytes, path: path)
        hasher.update(rows)
        let sum = try readExactly(fd, 32, path: path)
        guard sum == hasher.finalize() else { throw Invalid(reason: "checksum mismatch (damaged)") }
        let tokens = (0..<count).map { i in
            Int(tokenData[4 * i..<4 * i + 4].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * $1.offset) })
        }
        return KVSnapshot(
            tokens: tokens, regime: u32(48), cacheWidth: width, layers: u32(52),
            kvHeads: u32(56), headDim: u32(60), rows: rows)
    }

    private static func readExactly(_ fd: Int32, _ count: Int, path: String) throws -> [UInt8] {
        try [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            var done = 0
            while done < count {
                let n = Foundation.read(fd, buffer.baseAddress! + done, min(count - done, 1 << 30))
                if n < 0 && errno == EINTR { continue }
                if n < 0 { throw FileError(path: path, operation: "read", errno: errno) }
                if n == 0 { throw Invalid(reason: "ends early (truncated)") }
                done += n
            }
            initialized = count
        }
    }
}

import Foundation
import PhiEngine
import PhiFormats

/// The file a `KVSnapshot` is stored in (little-endian):
///
///     "PKKVSNAP"  u32 version  [32] fingerprint
///     u32 kv bits  u32 regime  u32 layers  u32 kv heads  u32 head dim
///     u64 token count  u64 row bytes  u32 block bytes
///     u32 tokens[token count]
///     u32 CRC-32C of each `block bytes` of the rows (the last block may be shorter)
///     u32 CRC-32C of everything before it (the head)
///     u8 rows[row bytes]
///
/// A reader checks the head (size, checksum, fingerprint, shape) before reading a row, then
/// reads the rows straight into a session's cache (`Reader.read(into:at:)`), checking each
/// block as it completes: a truncated or damaged file is refused, never restored. CRC-32C
/// rather than SHA-256 (version 1): the threat is damage, not an adversary who can write the
/// cache folder, and at memory speed the check costs a fraction of reading the file.
enum KVSnapshotFile {
    static let magic = Array("PKKVSNAP".utf8)
    static let version: UInt32 = 2
    /// The fixed part of the head, up to the tokens.
    static let headerBytes = 8 + 4 + 32 + 5 * 4 + 2 * 8 + 4
    /// Rows per checksum: small enough that damage is found early and a block is checked
    /// while it is still in the CPU's cache, large enough that the table stays small (6 KB for
    /// 1.5 GB of rows).
    static let blockBytes = 1 << 20

    /// Why a file was refused.
    struct Invalid: Error { let reason: String }

    /// Bytes of the file that stores `layout`'s rows.
    static func fileBytes(_ layout: KVSnapshot.Layout) -> Int {
        headBytes(tokens: layout.tokens.count, rowBytes: layout.rowBytes) + layout.rowBytes
    }

    static func headBytes(tokens: Int, rowBytes: Int) -> Int {
        headerBytes + 4 * tokens + 4 * blockCount(rowBytes) + 4
    }

    static func blockCount(_ rowBytes: Int) -> Int { (rowBytes + blockBytes - 1) / blockBytes }

    static func tokenBytes(_ tokens: some Collection<Int>) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4 * tokens.count)
        for t in tokens { appendU32(&out, t) }
        return out
    }

    /// Writes `snapshot` to `path` (a new file; the caller renames it into place).
    static func write(
        _ snapshot: KVSnapshot, fingerprint: ModelFingerprint, to path: String
    ) throws {
        let layout = snapshot.layout
        var head = magic
        appendU32(&head, Int(version))
        head += fingerprint.digest
        for v in [layout.cacheWidth.rawValue, layout.regime, layout.layers, layout.kvHeads, layout.headDim] {
            appendU32(&head, v)
        }
        appendU64(&head, layout.tokens.count)
        appendU64(&head, snapshot.rows.count)
        appendU32(&head, blockBytes)
        head += tokenBytes(layout.tokens)
        snapshot.rows.withUnsafeBytes { rows in
            for start in stride(from: 0, to: rows.count, by: blockBytes) {
                let block = UnsafeRawBufferPointer(rebasing: rows[start..<min(start + blockBytes, rows.count)])
                appendU32(&head, Int(CRC32C.of(block)))
            }
        }
        appendU32(&head, Int(head.withUnsafeBytes { CRC32C.of($0) }))

        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError(path: path, operation: "create", errno: errno) }
        defer { close(fd) }
        try head.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: path) }
        try snapshot.rows.withUnsafeBytes { try POSIXFile.writeAll(fd, $0, path: path) }
        try POSIXFile.sync(fd, path: path)
    }

    /// An open snapshot file whose head has been checked: its layout, and its rows read on
    /// demand, in order, each block checked against its checksum as soon as it is complete.
    final class Reader {
        let path: String
        let layout: KVSnapshot.Layout
        private let fd: Int32
        private let rowsStart: Int
        private let sums: [UInt32]
        /// Rows read and the checksum of the block being read.
        private var rowsRead = 0
        private var crc = CRC32C()

        /// Opens `path` and checks its head, refusing (`Invalid`) a file of another format
        /// version or fingerprint, a size other than its head promises, a head that fails its
        /// checksum, or rows that do not fit the shape it names.
        init(_ path: String, fingerprint: ModelFingerprint) throws {
            self.path = path
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileError(path: path, operation: "open", errno: errno) }
            do {
                (layout, sums, rowsStart) = try Self.readHead(fd, path: path, fingerprint: fingerprint)
            } catch {
                close(fd)
                throw error
            }
        }

        deinit { close(fd) }

        /// The whole snapshot, read into memory and checked.
        func readAll() throws -> KVSnapshot {
            let rows = try [UInt8](unsafeUninitializedCapacity: layout.rowBytes) { buffer, initialized in
                try read(into: UnsafeMutableRawBufferPointer(buffer), at: 0)
                initialized = layout.rowBytes
            }
            return KVSnapshot(layout: layout, rows: rows)
        }

        /// Whether every row has been read (and so checked).
        var isComplete: Bool { rowsRead == layout.rowBytes }

        /// Reads the rows at `offset` (where the previous read ended: rows are read in order)
        /// into `piece`, checking each block of the file that completes. `Invalid` when a
        /// block's checksum does not match or the file ends early.
        func read(into piece: UnsafeMutableRawBufferPointer, at offset: Int) throws {
            precondition(offset == rowsRead && offset + piece.count <= layout.rowBytes)
            var done = 0
            while done < piece.count {
                let blockEnd = (rowsRead / blockBytes + 1) * blockBytes
                let count = min(piece.count - done, blockEnd - rowsRead)
                let part = UnsafeMutableRawBufferPointer(rebasing: piece[done..<done + count])
                try KVSnapshotFile.pread(fd, into: part, at: rowsStart + rowsRead, path: path)
                crc.update(UnsafeRawBufferPointer(part))
                rowsRead += count
                done += count
                if rowsRead == blockEnd || rowsRead == layout.rowBytes {
                    guard crc.value == sums[(rowsRead - 1) / blockBytes] else {
                        throw Invalid(reason: "checksum mismatch in its rows (damaged)")
                    }
                    crc = CRC32C()
                }
            }
        }

        private static func readHead(
            _ fd: Int32, path: String, fingerprint: ModelFingerprint
        ) throws -> (KVSnapshot.Layout, [UInt32], Int) {
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                throw FileError(path: path, operation: "stat", errno: errno)
            }
            let size = Int(info.st_size)
            guard size >= headerBytes + 4 else { throw Invalid(reason: "shorter than its header") }
            var header = [UInt8](repeating: 0, count: headerBytes)
            try header.withUnsafeMutableBytes { try KVSnapshotFile.pread(fd, into: $0, at: 0, path: path) }
            guard Array(header[0..<8]) == magic else { throw Invalid(reason: "not a phikit KV file") }
            guard u32(header, 8) == Int(version) else {
                throw Invalid(reason: "format version \(u32(header, 8)), this build reads \(version)")
            }
            guard Array(header[12..<44]) == fingerprint.digest else {
                throw Invalid(reason: "written for another model, cache width or engine")
            }
            guard let width = KVCacheWidth(rawValue: u32(header, 44)) else {
                throw Invalid(reason: "unknown cache width \(u32(header, 44))")
            }
            // bounded by the size before any arithmetic, so a forged count cannot overflow it
            let (count, rowBytes, block) = (u64(header, 64), u64(header, 72), u32(header, 80))
            guard count <= size, rowBytes <= size, block == blockBytes,
                size == headBytes(tokens: count, rowBytes: rowBytes) + rowBytes
            else {
                throw Invalid(reason: "\(size) bytes, not what its header promises (truncated?)")
            }
            var head = [UInt8](repeating: 0, count: headBytes(tokens: count, rowBytes: rowBytes))
            try head.withUnsafeMutableBytes { try KVSnapshotFile.pread(fd, into: $0, at: 0, path: path) }
            let sumAt = head.count - 4
            guard head.withUnsafeBytes({ CRC32C.of(UnsafeRawBufferPointer(rebasing: $0[..<sumAt])) })
                == UInt32(u32(head, sumAt))
            else { throw Invalid(reason: "checksum mismatch in its head (damaged)") }
            let (regime, layers, kvHeads, headDim) =
                (u32(header, 48), u32(header, 52), u32(header, 56), u32(header, 60))
            // a real cache has at least a byte per key and value element: bounding the shape by
            // the rows keeps the row count the shape implies from overflowing
            let elements = [layers, kvHeads, headDim, count].reduce(Optional(1)) { product, v in
                product.flatMap { p in
                    let (r, overflow) = p.multipliedReportingOverflow(by: v)
                    return v < 1 || overflow ? nil : r
                }
            }
            guard let elements, elements <= rowBytes else {
                throw Invalid(reason: "\(rowBytes) bytes of rows do not fit the shape it names")
            }
            let tokens = (0..<count).map { u32(head, headerBytes + 4 * $0) }
            let sums = (0..<blockCount(rowBytes)).map { UInt32(u32(head, headerBytes + 4 * count + 4 * $0)) }
            let layout = KVSnapshot.Layout(
                tokens: tokens, regime: regime, cacheWidth: width, layers: layers,
                kvHeads: kvHeads, headDim: headDim)
            guard layout.rowBytes == rowBytes else {
                throw Invalid(reason: "\(rowBytes) bytes of rows do not fit the shape it names")
            }
            return (layout, sums, head.count)
        }
    }

    /// Fills `buffer` from `offset` of the file; `Invalid` when the file ends first.
    static func pread(
        _ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int, path: String
    ) throws {
        var done = 0
        while done < buffer.count {
            let n = Foundation.pread(
                fd, buffer.baseAddress! + done, min(buffer.count - done, 1 << 30), off_t(offset + done))
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw FileError(path: path, operation: "read", errno: errno) }
            if n == 0 { throw Invalid(reason: "ends early (truncated)") }
            done += n
        }
    }

    private static func appendU32(_ out: inout [UInt8], _ v: Int) {
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: v).littleEndian) { out += $0 }
    }

    private static func appendU64(_ out: inout [UInt8], _ v: Int) {
        withUnsafeBytes(of: UInt64(v).littleEndian) { out += $0 }
    }

    private static func u32(_ bytes: [UInt8], _ at: Int) -> Int {
        (0..<4).reduce(0) { $0 | Int(bytes[at + $1]) << (8 * $1) }
    }

    /// A u64 field, saturated far below overflow (a forged value is refused by size checks).
    private static func u64(_ bytes: [UInt8], _ at: Int) -> Int {
        let v = (0..<8).reduce(UInt64(0)) { $0 | UInt64(bytes[at + $1]) << (8 * $1) }
        return v > UInt64(1) << 56 ? 1 << 56 : Int(v)
    }
}

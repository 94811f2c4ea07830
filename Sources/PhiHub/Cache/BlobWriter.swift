import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes one blob. Bytes go to `blobs/<name>.incomplete` as they arrive and are hashed on the
/// way (SHA-256 for LFS files, git's blob SHA-1 otherwise), so checking costs no second pass.
/// The file becomes `blobs/<name>` only when its size and hash are what the Hub announced;
/// a mismatch deletes it. The partial survives anything else — a dropped connection, Ctrl-C,
/// `kill -9` — and the next writer resumes from its exact length (hashing what is there first).
///
/// As a response receiver it takes the body of a 200 or 206 only; the bodies of redirects and
/// errors are dropped. libcurl hands over 16 KB at a time; the writer stages 256 KiB (in a
/// `BlobHasher` buffer) before it writes and hashes, which saves 15 of every 16 system calls.
/// `flush()` after every transfer attempt puts the staged bytes on disk; a killed process loses
/// them, which only shortens the partial (it stays a correct prefix).
final class BlobWriter: HTTPResponseReceiver {
    let entry: HubFileEntry
    let partialPath: String
    let finalPath: String
    /// Bytes received so far (on disk or staged): where the next request resumes.
    private(set) var written = 0
    /// Bytes already on disk when this writer opened the partial (0 again after a restart).
    private(set) var resumedFrom: Int
    /// Body bytes taken from the network by this writer.
    private(set) var received = 0
    /// Why the last transfer was refused, when it was the writer that refused it.
    private(set) var problem: HubError?
    /// CPU time spent hashing (not wall time: on a busy machine a thread may wait for a core
    /// mid-hash), for the benchmark's "hashing share". Final once `finish` returned.
    var hashNanoseconds: UInt64 { hasher.cpuNanoseconds }

    /// False only in the benchmark's measuring build (`-DPHIKIT_BENCH_NO_HASH`, made by
    /// scripts/bench/bench_pull.sh into its own scratch folder to time what hashing costs);
    /// a phikit built any other way always checks every byte.
    #if PHIKIT_BENCH_NO_HASH
        static let verifies = false
    #else
        static let verifies = true
    #endif

    private var fd: Int32
    private let hasher: BlobHasher
    private var accepting = false
    private let onBytes: (Int) -> Bool
    /// Received bytes in `hasher.buffer`, not yet written or hashed (the last ones of `written`).
    private var staged = 0

    /// Opens (or creates) the partial and hashes what it holds. `onBytes` hears of every chunk
    /// written and answers false to stop the transfer (another file failed, or Ctrl-C).
    init(
        entry: HubFileEntry, partialPath: String, finalPath: String,
        onBytes: @escaping (Int) -> Bool
    ) throws(HubError) {
        self.entry = entry
        self.partialPath = partialPath
        self.finalPath = finalPath
        self.onBytes = onBytes
        fd = open(partialPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw .local(FileError(path: partialPath, operation: "open", errno: errno))
        }
        hasher = BlobHasher(entry)
        var st = stat()
        fstat(fd, &st)
        var existing = Int(st.st_size)
        if existing > entry.size {  // not a prefix of this file: start over
            ftruncate(fd, 0)
            existing = 0
        }
        resumedFrom = existing
        try hashExisting(existing)
    }

    deinit {
        hasher.stop()
        closeFile()
    }

    /// Reads the `count` bytes already in the partial into the digest.
    private func hashExisting(_ count: Int) throws(HubError) {
        var offset = 0
        while offset < count {
            let buffer = hasher.buffer
            let n = pread(fd, buffer.baseAddress, min(buffer.count, count - offset), off_t(offset))
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw .local(
                    FileError(path: partialPath, operation: "read", errno: n < 0 ? errno : EIO))
            }
            if Self.verifies { hasher.commit(n) }
            offset += n
        }
        written = count
        lseek(fd, off_t(count), SEEK_SET)
    }

    /// Throws away what was written and starts the file again from byte 0.
    func restart() {
        ftruncate(fd, 0)
        lseek(fd, 0, SEEK_SET)
        written = 0
        staged = 0
        resumedFrom = 0
        hasher.reset(entry)
    }

    // MARK: HTTPResponseReceiver

    func receive(head: HTTPResponseHead) -> BodyDecision {
        problem = nil
        accepting = false
        switch head.status {
        case 206:
            guard let range = Self.contentRange(head.headers["Content-Range"]),
                range.start == written
            else {
                problem = .inconsistentMetadata(
                    path: entry.path,
                    detail:
                        "the server resumed at the wrong offset "
                        + "(\(head.headers["Content-Range"] ?? "no Content-Range"), "
                        + "expected byte \(written))"
                )
                return .abort
            }
            if let total = range.total, total != entry.size {
                problem = .sizeMismatch(path: entry.path, expected: entry.size, actual: total)
                return .abort
            }
        case 200:
            // The server ignored the Range (or none was sent): the body is the whole file.
            if written > 0 { restart() }
            if let length = head.headers["Content-Length"].flatMap(Int.init), length != entry.size {
                problem = .sizeMismatch(path: entry.path, expected: entry.size, actual: length)
                return .abort
            }
        default:
            return .proceed  // a redirect's or an error's body: read and dropped
        }
        if let encoding = head.headers["Content-Encoding"], encoding.lowercased() != "identity" {
            problem = .badResponse(url: head.url, detail: "compressed file body (\(encoding))")
            return .abort
        }
        accepting = true
        return .proceed
    }

    func receive(body: UnsafeRawBufferPointer) -> BodyDecision {
        guard accepting else { return .proceed }
        guard written + body.count <= entry.size else {
            problem = .sizeMismatch(
                path: entry.path, expected: entry.size, actual: written + body.count)
            return .abort
        }
        var offset = 0
        while offset < body.count {
            let staging = hasher.buffer
            let n = min(body.count - offset, staging.count - staged)
            UnsafeMutableRawBufferPointer(rebasing: staging[staged..<staged + n])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: body[offset..<offset + n]))
            staged += n
            written += n
            received += n
            offset += n
            if staged == staging.count {
                do {
                    guard try flush() else { return .abort }
                } catch {
                    problem = error
                    return .abort
                }
            }
        }
        return .proceed
    }

    /// Writes the staged bytes and hands them to the hasher. Returns what `onBytes` answered
    /// (false: stop).
    @discardableResult
    func flush() throws(HubError) -> Bool {
        guard staged > 0 else { return true }
        do {
            try POSIXFile.writeAll(
                fd, UnsafeRawBufferPointer(rebasing: hasher.buffer[0..<staged]), path: partialPath)
        } catch {
            throw .local(error)
        }
        if Self.verifies { hasher.commit(staged) }
        let count = staged
        staged = 0
        return onBytes(count)
    }

    // MARK: Finishing

    /// Checks the hash of a complete partial and moves it to `blobs/<name>` (fsync, rename,
    /// fsync of the folder). A mismatch deletes the partial: nothing wrong stays in the cache.
    func finish() throws(HubError) {
        try flush()
        guard written == entry.size else {
            throw .sizeMismatch(path: entry.path, expected: entry.size, actual: written)
        }
        let expected = entry.expectedDigest
        let actual = Self.verifies ? hasher.finish() : expected.hex
        guard actual == expected.hex else {
            discard()
            throw .hashMismatch(
                path: entry.path, algorithm: expected.algorithm, expected: expected.hex,
                actual: actual)
        }
        do {
            try POSIXFile.sync(fd, path: partialPath)
            closeFile()
            try POSIXFile.rename(partialPath, to: finalPath)
            try POSIXFile.syncDirectory(containing: finalPath)
        } catch {
            throw .local(error)
        }
    }

    /// Deletes the partial (its bytes are known to be wrong).
    func discard() {
        staged = 0
        closeFile()
        unlink(partialPath)
    }

    func closeFile() {
        guard fd >= 0 else { return }
        close(fd)
        fd = -1
    }

    /// `bytes 100-199/200` → (100, 200); `bytes 100-199/*` → (100, nil).
    static func contentRange(_ value: String?) -> (start: Int, total: Int?)? {
        guard let value, value.hasPrefix("bytes ") else { return nil }
        let spec = value.dropFirst(6)
        let halves = spec.split(separator: "/", maxSplits: 1)
        guard halves.count == 2, let dash = halves[0].firstIndex(of: "-"),
            let start = Int(halves[0][..<dash])
        else { return nil }
        return (start, halves[1] == "*" ? nil : Int(halves[1]))
    }
}

import Foundation
import PhiEngine
import PhiFormats

/// KV caches of token prefixes on disk, so a long prompt is not computed again after a
/// restart (`serve --cache-dir`). One folder per `ModelFingerprint` under `directory`, one
/// file per stored prefix, named `<tokens>-<hash of the tokens>.kv` (`KVSnapshotFile`);
/// a lookup lists the model's folder and tries the longest prefix of the prompt first.
///
/// Safe to share between processes: a file is written under a unique temporary name, synced
/// and renamed into place, so a reader sees a whole file or none; a file that is truncated,
/// damaged or of another model anyway is refused (checksum, size, fingerprint, the tokens
/// themselves), reported through `warn` and removed. The folder is kept under `limitBytes`
/// by removing the least recently used files (a restore touches its file's modification time).
public final class DiskPrefixCache: @unchecked Sendable {  // only the file system is shared
    public let directory: String
    public let limitBytes: Int
    public let fingerprint: ModelFingerprint
    /// Prompts shorter than this are not worth a file (`storeInBackground` skips them).
    public let minTokens: Int
    /// Where refused files and failed writes are reported (the library never prints).
    public let warn: @Sendable (String) -> Void
    /// Background writes, one at a time.
    private let writes = DispatchQueue(label: "phikit-disk-cache", qos: .utility)
    /// Prompts that restored a prefix from disk, and the tokens restored (for /metrics).
    private let counts = NSLock()
    private var hitCount = 0
    private var restoredTokenCount = 0
    private var folder: String { directory + "/" + fingerprint.description }

    public init(
        directory: String, limitBytes: Int, fingerprint: ModelFingerprint, minTokens: Int = 1,
        warn: @escaping @Sendable (String) -> Void
    ) throws(FileError) {
        self.directory = directory
        self.limitBytes = limitBytes
        self.fingerprint = fingerprint
        self.minTokens = minTokens
        self.warn = warn
        do {
            try FileManager.default.createDirectory(
                atPath: directory + "/" + fingerprint.description,
                withIntermediateDirectories: true)
        } catch {
            let code = ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError)?.code
            throw FileError(
                path: directory, operation: "create the cache folder",
                errno: code.map(Int32.init) ?? EACCES)
        }
    }

    /// The name a prefix is stored under.
    static func fileName(_ tokens: some Collection<Int>) -> String {
        "\(tokens.count)-\(prefixHash(tokens)).kv"
    }

    static func prefixHash(_ tokens: some Collection<Int>) -> String {
        var hasher = SHA256Hasher()
        hasher.update(KVSnapshotFile.tokenBytes(Array(tokens)))
        return hasher.finalize().prefix(12).map { String(format: "%02x", $0) }.joined()
    }

    /// The longest stored prefix of `tokens` with more than `longerThan` and at most `atMost`
    /// tokens, read and checked; nil when there is none. Refused files are reported and removed.
    public func longestPrefix(of tokens: [Int], atMost: Int, longerThan: Int = 0) -> KVSnapshot? {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var lengths: [Int: [String]] = [:]
        for name in names where name.hasSuffix(".kv") && !name.hasPrefix(".") {
            guard let dash = name.firstIndex(of: "-"), let n = Int(name[..<dash]),
                n > longerThan, n <= min(atMost, tokens.count)
            else { continue }
            lengths[n, default: []].append(name)
        }
        for n in lengths.keys.sorted(by: >) {
            let name = Self.fileName(tokens[..<n])
            guard lengths[n]!.contains(name) else { continue }
            let path = folder + "/" + name
            do {
                let snapshot = try KVSnapshotFile.read(path, fingerprint: fingerprint)
                guard snapshot.tokens == Array(tokens[..<n]) else {
                    throw KVSnapshotFile.Invalid(reason: "holds other tokens than its name says")
                }
                touch(path)
                return snapshot
            } catch let invalid as KVSnapshotFile.Invalid {
                warn("ignoring disk cache file '\(path)': \(invalid.reason); removed")
                unlink(path)
            } catch {
                warn("ignoring disk cache file '\(path)': \(error)")
            }
        }
        return nil
    }

    /// Whether the prefix `tokens` is stored (by name; a read checks it).
    public func contains(_ tokens: [Int]) -> Bool {
        FileManager.default.fileExists(atPath: folder + "/" + Self.fileName(tokens))
    }

    /// Stores `snapshot` (unless it is there already or alone exceeds the limit), then evicts
    /// the least recently used files beyond the limit. Returns whether it wrote the file.
    @discardableResult
    public func store(_ snapshot: KVSnapshot) throws -> Bool {
        let size = KVSnapshotFile.headerBytes + 4 * snapshot.tokens.count + snapshot.rows.count + 32
        guard size <= limitBytes, !contains(snapshot.tokens) else { return false }
        let path = folder + "/" + Self.fileName(snapshot.tokens)
        // unique per process and call: two servers writing the same prefix never share a temp
        let temp = folder + "/.\(getpid())-\(UInt64.random(in: 0...UInt64.max)).tmp"
        do {
            try KVSnapshotFile.write(snapshot, fingerprint: fingerprint, to: temp)
            try POSIXFile.rename(temp, to: path)
        } catch {
            unlink(temp)
            throw error
        }
        try? POSIXFile.syncDirectory(containing: path)
        evict()
        return true
    }

    /// Puts the longest stored prefix of `prompt` into `session` when it is longer than what
    /// the session's cache already shares with the prompt, and returns how many leading
    /// tokens `prepare(prompt)` will now keep. The last prompt token is always left to
    /// compute (its logits are wanted): a stored prefix that is the whole prompt is restored
    /// and its last position dropped. A prefix the session refuses is reported and skipped.
    @discardableResult
    public func restoreLongestPrefix(of prompt: [Int], into session: InferenceSession) -> Int {
        let reusable = max(0, min(session.commonPrefixLength(with: prompt), prompt.count - 1))
        guard reusable < prompt.count - 1,
            let snapshot = longestPrefix(of: prompt, atMost: prompt.count, longerThan: reusable)
        else { return reusable }
        do {
            try session.restore(snapshot)
            let kept = session.rewind(to: min(snapshot.tokens.count, prompt.count - 1))
            counts.lock()
            hitCount += 1
            restoredTokenCount += kept
            counts.unlock()
            return kept
        } catch {
            warn("ignoring a disk-cached prefix: \(error)")
            return max(0, min(session.commonPrefixLength(with: prompt), prompt.count - 1))
        }
    }

    /// Once `session` has computed `prompt` (it may hold more after it), writes the prompt's
    /// KV cache unless it is shorter than `minTokens`, all of it came from a cache
    /// (`reused` == its length), or it is stored already. The rows are copied now; the file
    /// is written on a background queue (`waitForWrites`).
    public func storeInBackground(prompt: [Int], from session: InferenceSession, reused: Int) {
        guard prompt.count >= minTokens, reused < prompt.count, !contains(prompt),
            session.commonPrefixLength(with: prompt) == prompt.count,
            let snapshot = session.snapshot(count: prompt.count)
        else { return }
        writes.async { [self] in
            do {
                try store(snapshot)
            } catch {
                warn("cannot write the disk cache: \(error)")
            }
        }
    }

    /// Returns once the writes queued so far are done (before the process exits).
    public func waitForWrites() { writes.sync {} }

    /// Prompts that restored a prefix from this cache, and how many tokens that saved.
    public var hits: (prompts: Int, tokens: Int) {
        counts.lock()
        defer { counts.unlock() }
        return (hitCount, restoredTokenCount)
    }

    /// Bytes of every stored file, all models.
    public var totalBytes: Int { files().reduce(0) { $0 + $1.size } }

    /// Removes the least recently used files (any model's) until the total fits the limit,
    /// and temporary files left by a writer that died an hour ago or more.
    public func evict() {
        var all = files()
        let now = Date().timeIntervalSince1970
        for file in all where file.temporary && now - file.modified > 3600 { unlink(file.path) }
        all.removeAll { $0.temporary }
        var total = all.reduce(0) { $0 + $1.size }
        for file in all.sorted(by: { $0.modified < $1.modified }) where total > limitBytes {
            if unlink(file.path) == 0 || errno == ENOENT { total -= file.size }
        }
    }

    private struct StoredFile {
        let path: String
        let size: Int
        let modified: Double
        let temporary: Bool
    }

    private func files() -> [StoredFile] {
        var out: [StoredFile] = []
        let fm = FileManager.default
        for model in (try? fm.contentsOfDirectory(atPath: directory)) ?? [] {
            let dir = directory + "/" + model
            for name in (try? fm.contentsOfDirectory(atPath: dir)) ?? [] {
                let path = dir + "/" + name
                var info = stat()
                guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
                let temporary = name.hasPrefix(".") && name.hasSuffix(".tmp")
                guard temporary || name.hasSuffix(".kv") else { continue }
                out.append(
                    StoredFile(
                        path: path, size: Int(info.st_size),
                        modified: Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9,
                        temporary: temporary))
            }
        }
        return out
    }

    /// Marks `path` as just used (its modification time is the LRU clock).
    private func touch(_ path: String) { utimensat(AT_FDCWD, path, nil, 0) }
}

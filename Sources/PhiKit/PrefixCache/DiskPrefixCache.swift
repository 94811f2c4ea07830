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
        for (n, path) in candidates(of: tokens, atMost: atMost) where n > longerThan {
            if let snapshot = checked(path, { try open(path, prefixOf: tokens).readAll() }) {
                touch(path)
                return snapshot
            }
        }
        return nil
    }

    /// The stored prefixes of `tokens` of at most `atMost` tokens, longest first: their
    /// lengths and paths, found by name (a read checks them).
    private func candidates(of tokens: [Int], atMost: Int) -> [(count: Int, path: String)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        let stored = Set(names.filter { $0.hasSuffix(".kv") && !$0.hasPrefix(".") })
        let lengths = Set(stored.compactMap { name in name.firstIndex(of: "-").flatMap { Int(name[..<$0]) } })
        return lengths.filter { $0 >= 1 && $0 <= min(atMost, tokens.count) }.sorted(by: >)
            .compactMap { n in
                let name = Self.fileName(tokens[..<n])
                return stored.contains(name) ? (n, folder + "/" + name) : nil
            }
    }

    /// The file at `path`, its head checked and its tokens a prefix of `tokens` (a name holds
    /// only a hash of them).
    private func open(_ path: String, prefixOf tokens: [Int]) throws -> KVSnapshotFile.Reader {
        let file = try KVSnapshotFile.Reader(path, fingerprint: fingerprint)
        guard file.layout.tokens.elementsEqual(tokens.prefix(file.layout.tokens.count)) else {
            throw KVSnapshotFile.Invalid(reason: "holds other tokens than its name says")
        }
        return file
    }

    /// `body`'s result, or nil when it fails: a file it refuses (`KVSnapshotFile.Invalid`,
    /// or holding other tokens than its name says) is reported and removed, another failure
    /// (the file vanished, a session that cannot take it) reported.
    private func checked<T>(_ path: String, _ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch let invalid as KVSnapshotFile.Invalid {
            warn("ignoring disk cache file '\(path)': \(invalid.reason); removed")
            unlink(path)
        } catch {
            warn("ignoring disk cache file '\(path)': \(error)")
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
        guard KVSnapshotFile.fileBytes(snapshot.layout) <= limitBytes, !contains(snapshot.tokens) else { return false }
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
    /// and its last position dropped. The rows are read from the file straight into the
    /// session's cache; a file refused half way leaves the session empty, and the next
    /// shorter prefix is tried. A prefix the session refuses is reported and skipped.
    @discardableResult
    public func restoreLongestPrefix(of prompt: [Int], into session: InferenceSession) -> Int {
        func reusable() -> Int { max(0, min(session.commonPrefixLength(with: prompt), prompt.count - 1)) }
        // asked again for each: a file refused half way has emptied the session
        for (n, path) in candidates(of: prompt, atMost: prompt.count)
        where min(n, prompt.count - 1) > reusable() {
            let restored: Int? = checked(path) {
                let file = try open(path, prefixOf: prompt)
                try session.restore(file.layout, rows: file.read(into:at:))
                guard file.isComplete else {  // not expected: the session takes the rows the file holds
                    session.reset()
                    throw KVSnapshotFile.Invalid(reason: "its rows were not all read")
                }
                return file.layout.tokens.count
            }
            guard let restored else { continue }
            touch(path)
            let kept = session.rewind(to: min(restored, prompt.count - 1))
            counts.lock()
            hitCount += 1
            restoredTokenCount += kept
            counts.unlock()
            return kept
        }
        return reusable()
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

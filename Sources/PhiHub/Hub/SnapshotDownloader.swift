import Foundation

/// Downloads a repo snapshot into the Hugging Face cache, the way `snapshot_download` lays it
/// out, but resumable to the byte, verified by hash, retried on 429/5xx/dropped connections,
/// and never leaving an unverified file in `blobs/` or `snapshots/`.
///
///     let downloader = SnapshotDownloader(configuration: .from(environment: env), cache: cache)
///     let plan = try downloader.plan(repoID: "org/name", revision: "main", patterns: .mlxDefaults)
///     let result = try downloader.download(plan, jobs: 8) { progress in … }
public struct SnapshotDownloader: Sendable {
    public let configuration: HubConfiguration
    public let cache: HubCache
    /// Seconds to wait for another process that downloads the same blob
    /// (`PHIKIT_LOCK_TIMEOUT_SECONDS`, default 10 minutes).
    public var lockTimeout: Double

    public init(configuration: HubConfiguration, cache: HubCache, lockTimeout: Double = 600) {
        self.configuration = configuration
        self.cache = cache
        self.lockTimeout = lockTimeout
    }

    // MARK: Plan

    /// Resolves the commit and the file list (from the cache when it has them), selects files
    /// with `patterns`, and looks at what the cache already holds. Offline (`HF_HUB_OFFLINE`),
    /// it uses the cache only and fails unless the selected files are all there.
    public func plan(
        repoID: String, revision: String, patterns: FilePatterns
    ) throws(HubError) -> SnapshotPlan {
        if configuration.offline {
            return try offlinePlan(repoID: repoID, revision: revision, patterns: patterns)
        }
        let client = try HubClient(configuration: configuration)
        let commit =
            HubCache.isCommitHash(revision)
            ? revision : try client.commit(repoID: repoID, revision: revision)
        let cached = cache.fileListing(repoID: repoID, commit: commit)
        let listing: [HubFileEntry]
        if let cached {
            listing = cached
        } else {
            listing = try client.listFiles(repoID: repoID, commit: commit)
        }
        let selected = listing.filter { patterns.matches($0.path) }
        try Self.checkPaths(selected.map(\.path), repoID: repoID)
        return SnapshotPlan(
            repoID: repoID, revision: revision, commit: commit,
            files: states(selected, repoID: repoID, commit: commit), listing: listing,
            listingWasCached: cached != nil,
            snapshotDirectory: cache.snapshotPath(repoID: repoID, commit: commit),
            freeBytes: HubCache.freeBytes(at: cache.repoDirectory(repoID: repoID)))
    }

    private func offlinePlan(
        repoID: String, revision: String, patterns: FilePatterns
    ) throws(HubError) -> SnapshotPlan {
        guard let commit = cache.commit(repoID: repoID, revision: revision),
            FileManager.default.fileExists(
                atPath: cache.snapshotPath(repoID: repoID, commit: commit))
        else { throw .offline(repoID: repoID, revision: revision, missing: []) }
        let listing = cache.fileListing(repoID: repoID, commit: commit)
        // Without a saved listing, the snapshot is taken as it is (huggingface_hub does the same).
        let selected = (listing ?? presentFiles(repoID: repoID, commit: commit))
            .filter { patterns.matches($0.path) }
        let files = states(selected, repoID: repoID, commit: commit)
        let missing = files.filter { $0.state != .cached }.map(\.entry.path)
        guard !missing.isEmpty || !files.isEmpty else {
            throw .offline(repoID: repoID, revision: revision, missing: [])
        }
        guard missing.isEmpty else {
            throw .offline(repoID: repoID, revision: revision, missing: missing)
        }
        return SnapshotPlan(
            repoID: repoID, revision: revision, commit: commit, files: files, listing: listing,
            listingWasCached: true,
            snapshotDirectory: cache.snapshotPath(repoID: repoID, commit: commit), freeBytes: nil)
    }

    private func states(
        _ entries: [HubFileEntry], repoID: String, commit: String
    ) -> [SnapshotFile] {
        entries.sorted { HubCache.pythonOrder($0.path, $1.path) }.map {
            SnapshotFile(entry: $0, state: cache.state(of: $0, repoID: repoID, commit: commit))
        }
    }

    /// The files a snapshot holds, described from their links (for an offline pull of a
    /// snapshot without a saved listing).
    private func presentFiles(repoID: String, commit: String) -> [HubFileEntry] {
        cache.snapshotFiles(repoID: repoID, commit: commit).compactMap { file in
            guard let blob = file.blobName, let size = file.size else { return nil }
            let lfs = blob.utf8.count == 64 ? HubFileEntry.LFSObject(sha256: blob, size: size) : nil
            return HubFileEntry(path: file.path, size: size, blobID: blob, lfs: lfs)
        }
    }

    /// Refuses the whole plan if any selected path could write outside the snapshot.
    static func checkPaths(_ paths: [String], repoID: String) throws(HubError) {
        for path in paths {
            if let problem = RepoPath.problem(path) {
                throw .unsafePath(repoID: repoID, path: path, reason: problem)
            }
        }
        if let path = RepoPath.fileUsedAsFolder(paths) {
            throw .unsafePath(
                repoID: repoID, path: path, reason: "is inside a folder that is also a file")
        }
    }

    // MARK: Download

    /// Fetches what the plan lacks with `jobs` parallel transfers, then points
    /// `refs/<revision>` at the commit (only now: an interrupted pull leaves the previous
    /// revision in place). `progress` is called on this thread about ten times a second.
    public func download(
        _ plan: SnapshotPlan, jobs: Int = 8, progress: (SnapshotProgress) -> Void = { _ in }
    ) throws(HubError) -> SnapshotResult {
        let result = try transfer(plan, jobs: jobs, progress: progress)
        try cache.writeRef(repoID: plan.repoID, revision: plan.revision, commit: plan.commit)
        return result
    }

    /// Fetches only the plan's files at `paths` (verified, into the cache) and leaves
    /// `refs/` alone; returns what was fetched and the plan with every file's state looked
    /// at again (for `download` of the rest). `pull` reads config.json this way before it
    /// fetches any weight.
    public func download(
        _ paths: Set<String>, of plan: SnapshotPlan
    ) throws(HubError) -> (fetched: SnapshotResult, rest: SnapshotPlan) {
        func with(files: [SnapshotFile]) -> SnapshotPlan {
            SnapshotPlan(
                repoID: plan.repoID, revision: plan.revision, commit: plan.commit, files: files,
                listing: plan.listing, listingWasCached: plan.listingWasCached,
                snapshotDirectory: plan.snapshotDirectory, freeBytes: plan.freeBytes)
        }
        let fetched = try transfer(
            with(files: plan.files.filter { paths.contains($0.entry.path) }), jobs: 1)
        return (
            fetched,
            with(files: states(plan.files.map(\.entry), repoID: plan.repoID, commit: plan.commit))
        )
    }

    private func transfer(
        _ plan: SnapshotPlan, jobs: Int, progress: (SnapshotProgress) -> Void = { _ in }
    ) throws(HubError) -> SnapshotResult {
        let start = Date()
        let repoID = plan.repoID
        if let listing = plan.listing, !plan.listingWasCached {
            do {
                try cache.saveFileListing(listing, repoID: repoID, commit: plan.commit)
            } catch {
                throw .local(error)
            }
        }
        let toFetch = plan.filesToDownload
        let needed = toFetch.reduce(0) { $0 + $1.entry.size - $1.bytesPresent }
        if let free = plan.freeBytes, needed > free {
            throw .notEnoughDiskSpace(path: cache.root, needed: needed, available: free)
        }
        try cache.makeDirectory(cache.repoDirectory(repoID: repoID) + "/blobs")
        try cache.makeDirectory(plan.snapshotDirectory)
        try cache.makeDirectory(
            (cache.lockPath(repoID: repoID, blobName: "x") as NSString).deletingLastPathComponent)
        cache.ensureCacheDirTag()
        for file in plan.files where file.state == .blobPresent {
            try cache.link(
                repoID: repoID, commit: plan.commit, path: file.entry.path,
                blobName: file.entry.blobName)
        }
        let board = DownloadBoard(files: toFetch, cancellation: configuration.cancellation)
        runWorkers(board, plan: plan, jobs: jobs, start: start, progress: progress)
        if let error = board.firstError { throw error }
        // Cancelled between two files, no transfer failed: the snapshot is still incomplete,
        // and refs/ must not point at it.
        if configuration.cancellation.isCancelled { throw .interrupted }
        return SnapshotResult(
            plan: plan, outcomes: board.outcomes, seconds: Date().timeIntervalSince(start),
            hashSeconds: Double(board.hashNanoseconds) / 1e9)
    }

    /// `jobs` threads, each with its own libcurl handle, take the largest remaining file
    /// until none is left or one fails; this thread reports progress meanwhile.
    private func runWorkers(
        _ board: DownloadBoard, plan: SnapshotPlan, jobs: Int, start: Date,
        progress: (SnapshotProgress) -> Void
    ) {
        let workers = min(max(1, jobs), board.fileCount)
        let finished = DispatchSemaphore(value: 0)
        for _ in 0..<workers {
            let job = WorkerJob(
                board: board, configuration: configuration, cache: cache, repoID: plan.repoID,
                commit: plan.commit, lockTimeout: lockTimeout)
            Thread.detachNewThread {
                job.run()
                finished.signal()
            }
        }
        var running = workers
        while running > 0 {
            if finished.wait(timeout: .now() + .milliseconds(100)) == .success {
                running -= 1
            }
            progress(board.progress(elapsed: Date().timeIntervalSince(start)))
        }
        progress(board.progress(elapsed: Date().timeIntervalSince(start)))
    }
}

/// One download thread: its own `HubClient` (libcurl handle), files from the shared board.
private struct WorkerJob: Sendable {
    let board: DownloadBoard
    let configuration: HubConfiguration
    let cache: HubCache
    let repoID: String
    let commit: String
    let lockTimeout: Double

    func run() {
        let client: HubClient
        do {
            client = try HubClient(configuration: configuration)
        } catch {
            board.fail(error)
            return
        }
        while let entry = board.next() {
            let download = FileDownload(
                client: client, cache: cache, repoID: repoID, commit: commit, entry: entry,
                lockTimeout: lockTimeout)
            do {
                let outcome = try download.run(
                    onBytes: { board.add(bytes: $0, to: entry.path) },
                    waiting: { board.waiting(for: entry.path, holder: $0) })
                board.finish(entry, outcome)
            } catch {
                board.fail(error)
            }
        }
    }
}

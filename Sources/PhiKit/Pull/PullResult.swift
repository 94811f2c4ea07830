import PhiHub

/// What a pull will do (`--dry-run` prints it; a real pull reports it before downloading).
public struct PullPlan: Sendable, Encodable {
    public var repoID: String
    public var revision: String
    public var commit: String
    public var snapshotDirectory: String
    public var files: [PlannedFile]
    public var totalBytes: Int
    /// Bytes already in the cache (complete blobs plus partials that will be resumed).
    public var cachedBytes: Int
    public var bytesToDownload: Int
    /// Free bytes on the cache's disk (nil offline or when it cannot be measured).
    public var freeBytes: Int?

    public struct PlannedFile: Sendable, Encodable {
        public var path: String
        public var size: Int
        /// `cached`, `linked` (blob present, link missing), `resume` or `download`.
        public var action: String
        public var bytesPresent: Int
    }

    init(_ plan: SnapshotPlan) {
        repoID = plan.repoID
        revision = plan.revision
        commit = plan.commit
        snapshotDirectory = plan.snapshotDirectory
        files = plan.files.map { file in
            let action =
                switch file.state {
                case .cached: "cached"
                case .blobPresent: "linked"
                case .partial: "resume"
                case .missing: "download"
                }
            return PlannedFile(
                path: file.entry.path, size: file.entry.size, action: action,
                bytesPresent: file.bytesPresent)
        }
        totalBytes = plan.totalBytes
        cachedBytes = plan.cachedBytes
        bytesToDownload = plan.bytesToDownload
        freeBytes = plan.freeBytes
    }
}

/// What a pull did. `snapshotDirectory` is the model directory `run`, `convert` and mlx-lm load.
public struct PullResult: Sendable, Encodable {
    /// MODEL as given.
    public var model: String
    /// nil for a model bundled with phikit (nothing to download).
    public var repoID: String?
    public var revision: String?
    public var commit: String?
    public var snapshotDirectory: String
    public var files: [PulledFile]
    public var totalBytes: Int
    public var bytesDownloaded: Int
    public var seconds: Double
    /// CPU time the download threads spent hashing (summed over threads).
    public var hashSeconds: Double
    public var dryRun: Bool
    public var bundled: Bool

    public struct PulledFile: Sendable, Encodable {
        public var path: String
        public var size: Int
        /// `cached`, `linked`, `downloaded`, or — in a dry run — the planned action.
        public var action: String
        public var bytesDownloaded: Int
        /// Bytes an earlier, interrupted pull had already fetched.
        public var resumedFrom: Int
    }
}

extension PullResult {
    init(model: String, plan: PullPlan) {
        self.init(
            model: model, repoID: plan.repoID, revision: plan.revision, commit: plan.commit,
            snapshotDirectory: plan.snapshotDirectory,
            files: plan.files.map {
                PulledFile(
                    path: $0.path, size: $0.size, action: $0.action, bytesDownloaded: 0,
                    resumedFrom: $0.bytesPresent)
            },
            totalBytes: plan.totalBytes, bytesDownloaded: 0, seconds: 0, hashSeconds: 0,
            dryRun: true, bundled: false)
    }

    init(model: String, result: SnapshotResult) {
        let files = result.files.map {
            PulledFile(
                path: $0.path, size: $0.size, action: $0.action.rawValue,
                bytesDownloaded: $0.bytesDownloaded, resumedFrom: $0.resumedFrom)
        }
        self.init(
            model: model, repoID: result.repoID, revision: result.revision,
            commit: result.commit, snapshotDirectory: result.snapshotDirectory, files: files,
            totalBytes: files.reduce(0) { $0 + $1.size }, bytesDownloaded: result.bytesDownloaded,
            seconds: result.seconds, hashSeconds: result.hashSeconds, dryRun: false,
            bundled: false)
    }
}

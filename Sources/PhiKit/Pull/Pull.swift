import Foundation
import PhiFormats
import PhiHub

/// `phikit pull`: a registry alias or Hub id → a complete, verified snapshot in the Hugging
/// Face cache, where huggingface_hub, mlx-lm and phikit's `run` find it.
///
/// `run` calls this to fetch a missing model first:
///
///     let result = try PhiKit.pull(PullOptions(model: "phi-4-mini")) { event in … }
///     let directory = result.snapshotDirectory
///
/// Order of work: resolve MODEL (registry, `@rev`); ask the Hub for the commit and the file
/// list (or reuse the saved listing); plan against the cache; check free disk space; fetch
/// the missing files in parallel, each verified by hash; point `refs/<revision>` at the commit
/// last, so an interrupted pull leaves the previous revision usable. Ctrl-C stops the
/// transfers; their partial files stay and the next pull resumes them.
public func pull(
    _ options: PullOptions, progress: (PullProgress) -> Void = { _ in }
) throws -> PullResult {
    guard options.jobs >= 1 else { throw PullError.badJobs(options.jobs) }
    let (repoID, revision): (String, String)
    switch try ModelLocator.reference(options.model, environment: options.environment) {
    case .directory(let path, let entry):
        guard entry != nil else { throw PullError.notAHubModel(path) }
        return PullResult(
            model: options.model, repoID: nil, revision: nil, commit: nil,
            snapshotDirectory: path, files: [], totalBytes: 0, bytesDownloaded: 0, seconds: 0,
            hashSeconds: 0, dryRun: options.dryRun, bundled: true)
    case .hub(let id, let referenceRevision, _):
        (repoID, revision) = (id, options.revision ?? referenceRevision)
    }
    let downloader = makeDownloader(options)
    progress(.resolving(repoID: repoID, revision: revision))
    let snapshotPlan = try downloader.plan(
        repoID: repoID, revision: revision, patterns: options.patterns)
    let plan = PullPlan(snapshotPlan)
    progress(.planned(plan))
    if options.dryRun { return PullResult(model: options.model, plan: plan) }
    if snapshotPlan.files.isEmpty { throw PullError.noFilesMatch(repoID: repoID) }
    let result = try Cancellation.cancellable {
        try downloader.download(snapshotPlan, jobs: min(options.jobs, 64)) {
            progress(.downloading($0))
        }
    }
    return PullResult(model: options.model, result: result)
}

private func makeDownloader(_ options: PullOptions) -> SnapshotDownloader {
    let environment = options.environment
    let configuration = HubConfiguration.from(
        environment: environment, token: options.token,
        userAgent: "phikit/\(PhiKitVersion.string)")
    let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
    let lockTimeout =
        environment["PHIKIT_LOCK_TIMEOUT_SECONDS"].flatMap(Double.init).map { max(0, $0) } ?? 600
    return SnapshotDownloader(
        configuration: configuration, cache: cache, lockTimeout: lockTimeout)
}

public enum PullError: UserFacingError, Equatable {
    case notAHubModel(String)
    case noFilesMatch(repoID: String)
    case badJobs(Int)

    public var message: String {
        switch self {
        case .notAHubModel(let path): "'\(path)' is a local directory; there is nothing to pull"
        case .noFilesMatch(let repo):
            "no file of '\(repo)' matches the --include/--exclude patterns"
        case .badJobs(let jobs): "--jobs must be at least 1 (got \(jobs))"
        }
    }

    public var hint: String? {
        switch self {
        case .notAHubModel: "pull takes a registry alias or a Hub id (org/name)"
        case .noFilesMatch: "`phikit pull MODEL --dry-run --include '*'` lists every file"
        case .badJobs: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notAHubModel, .badJobs: .usage
        case .noFilesMatch: .noInput
        }
    }
}

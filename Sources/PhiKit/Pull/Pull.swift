import Foundation
import PhiEngine
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
///
/// With the default file selection, config.json comes first: a model whose `model_type` the
/// engine cannot run is refused before any weight is fetched (issue 20: `run` used to
/// download a whole unsupported model before saying so). `--include` fetches anything.
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
    var rest = snapshotPlan
    var first: SnapshotResult?
    if options.include.isEmpty { (first, rest) = try checkRunnable(snapshotPlan, downloader) }
    let fetched = try downloader.download(rest, jobs: min(options.jobs, 64)) {
        progress(.downloading($0))
    }
    let result = first.map { fetched.including($0) } ?? fetched
    return PullResult(model: options.model, result: result)
}

/// Fetches the plan's config.json alone (when it has one) and refuses a `model_type` no
/// engine loader runs; returns what was fetched and the plan for the rest.
private func checkRunnable(
    _ plan: SnapshotPlan, _ downloader: SnapshotDownloader
) throws -> (SnapshotResult?, SnapshotPlan) {
    guard let config = plan.files.first(where: { $0.entry.path == "config.json" }) else {
        return (nil, plan)
    }
    var (fetched, rest): (SnapshotResult?, SnapshotPlan) = (nil, plan)
    if config.state != .cached {
        (fetched, rest) = try downloader.download(["config.json"], of: plan)
    }
    let path = (plan.snapshotDirectory as NSString).appendingPathComponent("config.json")
    // Whatever else is wrong with config.json is for the loader to explain, in the usual words.
    guard let bytes = try? LocalFile.read(path),
        let type = (try? JSONValue(parsing: bytes))?["model_type"]?.stringValue,
        !ModelArchitectures.supportedTypes.contains(type)
    else { return (fetched, rest) }
    throw PullError.unsupportedModelType(repoID: plan.repoID, modelType: type)
}

private func makeDownloader(_ options: PullOptions) -> SnapshotDownloader {
    let environment = options.environment
    var configuration = HubConfiguration.from(
        environment: environment, token: options.token,
        userAgent: "phikit/\(PhiKitVersion.string)")
    configuration.cancellation = options.cancellation
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
    /// config.json names an architecture the engine has no loader for.
    case unsupportedModelType(repoID: String, modelType: String)

    public var message: String {
        switch self {
        case .notAHubModel(let path): "'\(path)' is a local directory; there is nothing to pull"
        case .noFilesMatch(let repo):
            "no file of '\(repo)' matches the --include/--exclude patterns"
        case .badJobs(let jobs): "--jobs must be at least 1 (got \(jobs))"
        case .unsupportedModelType(let repo, let type):
            "'\(repo)' is a model_type '\(type)' model, which phikit cannot run (it runs "
                + ModelArchitectures.supportedTypes.map { "'\($0)'" }.joined(separator: ", ")
                + "); nothing but its config.json was downloaded"
        }
    }

    public var hint: String? {
        switch self {
        case .notAHubModel: "pull takes a registry alias or a Hub id (org/name)"
        case .noFilesMatch: "`phikit pull MODEL --dry-run --include '*'` lists every file"
        case .badJobs: nil
        case .unsupportedModelType:
            "to download its files anyway, name them: phikit pull MODEL --include '*'"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notAHubModel, .badJobs: .usage
        case .noFilesMatch: .noInput
        case .unsupportedModelType: .dataError
        }
    }
}

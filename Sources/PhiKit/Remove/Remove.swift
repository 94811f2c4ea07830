import Foundation
import PhiFormats
import PhiHub

public struct RemoveOptions: Sendable {
    /// A converted model's name, a registry alias or a Hub id (`org/name[@revision]`).
    public var model: String
    /// Remove only this revision: a branch or tag, a commit, or a commit prefix.
    public var revision: String? = nil
    public var environment: [String: String]

    public init(
        model: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        self.model = model
        self.environment = environment
    }
}

/// What `phikit rm` will delete, computed before anything is touched (shown with `--dry-run`
/// and before the confirmation question).
public struct RemovalPlan: Sendable, Encodable {
    public var model: String
    /// `hf-cache` or `converted`.
    public var source: String
    public var repoID: String?
    /// The commits whose snapshots go.
    public var commits: [String]
    /// Files and folders deleted, in order.
    public var paths: [String]
    public var freedBytes: Int
    /// Blobs of the removed revisions kept because another revision uses them.
    public var sharedBlobsKept: Int
    /// True when the whole model goes (every revision, or the converted folder).
    public var removesModel: Bool
    var deletion: CacheDeletion?

    enum CodingKeys: String, CodingKey {
        case model, source, repoID, commits, paths, freedBytes, sharedBlobsKept, removesModel
    }
}

/// Works out what removing `options.model` deletes. Never deletes anything itself.
public func planRemoval(_ options: RemoveOptions) throws -> RemovalPlan {
    let environment = options.environment
    let text = options.model
    guard ModelName.isUsable(text) else { throw RemoveError.notAName(text) }
    if !text.contains("/"), !text.hasPrefix("."), options.revision == nil {
        let stored = ModelStore.modelsDirectory(environment: environment) + "/" + text
        if HubCache.isDirectory(stored) { return storePlan(text, directory: stored) }
    }
    let (repoID, explicitRevision) = try hubTarget(text, environment: environment)
    let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
    guard let repo = cache.scanRepo(repoID: repoID) else {
        throw RemoveError.notInCache(text, cache: cache.root)
    }
    var commits: Set<String>?
    if let revision = options.revision ?? explicitRevision {
        commits = [try commit(matching: revision, in: repo)]
    }
    let deletion = cache.deletionPlan(repo, commits: commits)
    if let escaped = cache.escapingPath(deletion) {
        throw RemoveError.outsideCache(path: escaped, repoDirectory: repo.directory)
    }
    if deletion.repoDirectory == nil, commits == nil, !deletion.livePartials.isEmpty {
        throw RemoveError.downloadInProgress(repoID: repoID, partial: deletion.livePartials[0])
    }
    let paths =
        deletion.refFiles + deletion.snapshotDirectories + deletion.listingFiles
        + deletion.blobFiles + deletion.stalePartials + [deletion.repoDirectory].compactMap { $0 }
    return RemovalPlan(
        model: text, source: "hf-cache", repoID: repoID, commits: deletion.commits,
        paths: deletion.repoDirectory.map { [$0] + existing(cache.locksDirectory(repoID: repoID)) }
            ?? paths,
        freedBytes: deletion.freedBytes,
        sharedBlobsKept: deletion.sharedBlobsKept, removesModel: deletion.repoDirectory != nil,
        deletion: deletion)
}

/// Carries out a plan from `planRemoval`.
public func remove(
    _ plan: RemovalPlan, environment: [String: String] = ProcessInfo.processInfo.environment
) throws {
    if let deletion = plan.deletion {
        let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
        try cache.delete(deletion)
        return
    }
    for path in plan.paths {
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw RemoveError.cannotDelete(path: path, detail: error.localizedDescription)
        }
    }
}

private func existing(_ path: String) -> [String] {
    FileManager.default.fileExists(atPath: path) ? [path] : []
}

private func storePlan(_ name: String, directory: String) -> RemovalPlan {
    RemovalPlan(
        model: name, source: "converted", repoID: nil, commits: [], paths: [directory],
        freedBytes: FolderStats(directory).bytes, sharedBlobsKept: 0, removesModel: true,
        deletion: nil)
}

/// The repo of a registry alias or Hub id, and the revision written as `@rev` (a registry pin
/// does not count: `rm phi-4-mini` removes every revision of its repo).
private func hubTarget(
    _ text: String, environment: [String: String]
) throws -> (String, String?) {
    switch try ModelLocator.reference(text, environment: environment) {
    case .directory(let path, let entry):
        throw entry == nil ? RemoveError.notAModel(path) : RemoveError.bundled(entry!.name)
    case .hub(let repoID, let revision, _):
        let body = text.hasPrefix("hf://") ? String(text.dropFirst(5)) : text
        return (repoID, body.contains("@") ? revision : nil)
    }
}

/// A ref name, a full commit, or a unique commit prefix (at least 4 characters).
private func commit(matching revision: String, in repo: CachedRepo) throws -> String {
    if let match = repo.revisions.first(where: { $0.refs.contains(revision) }) {
        return match.commit
    }
    let matches = repo.revisions.filter { revision.count >= 4 && $0.commit.hasPrefix(revision) }
    guard matches.count == 1 else {
        throw RemoveError.revisionNotCached(
            repoID: repo.repoID, revision: revision,
            available: repo.revisions.map { $0.refs.first ?? String($0.commit.prefix(7)) })
    }
    return matches[0].commit
}

public enum RemoveError: UserFacingError, Equatable {
    case notInCache(String, cache: String)
    case revisionNotCached(repoID: String, revision: String, available: [String])
    case notAModel(String)
    case bundled(String)
    case downloadInProgress(repoID: String, partial: String)
    case cannotDelete(path: String, detail: String)
    /// Empty, blank or holding a NUL: `rm ""` (an unset variable) removed the whole store.
    case notAName(String)
    /// A path of the removal leads out of the repo folder through a symbolic link.
    case outsideCache(path: String, repoDirectory: String)

    public var message: String {
        switch self {
        case .notInCache(let model, let cache):
            "'\(model)' is neither a converted model nor in the Hugging Face cache at \(cache)"
        case .revisionNotCached(let repo, let revision, _):
            "revision '\(revision)' of '\(repo)' is not in the cache"
        case .notAModel(let path): "'\(path)' is a directory, not a model phikit manages"
        case .bundled(let name): "'\(name)' is bundled with phikit and cannot be removed"
        case .downloadInProgress(let repo, let partial):
            "a download of '\(repo)' is running (\(partial)); not removing it"
        case .cannotDelete(let path, let detail): "cannot delete \(path): \(detail)"
        case .notAName(let text): "'\(text)' is not a model name"
        case .outsideCache(let path, let repo):
            "refusing to remove \(repo): \(path) lies outside it through a symbolic link"
        }
    }

    public var hint: String? {
        switch self {
        case .notInCache: "`phikit list` shows what is on this machine"
        case .revisionNotCached(_, _, let available):
            "cached revisions: " + available.joined(separator: ", ")
        case .notAModel: "delete it with your file manager or rm -r"
        case .downloadInProgress: "wait for the pull to finish or stop it, then run rm again"
        case .notAName: "`phikit list` shows the names of the models on this machine"
        case .outsideCache: "check the links in the repo folder; delete it by hand if you mean to"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .notInCache, .revisionNotCached: .noInput
        case .notAModel, .bundled, .notAName: .usage
        case .downloadInProgress, .cannotDelete, .outsideCache: .ioError
        }
    }
}

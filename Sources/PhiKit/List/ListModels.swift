import Foundation
import PhiHub

public enum ListSort: String, Sendable, CaseIterable {
    case name, size, modified
}

public struct ListOptions: Sendable {
    /// Keep models whose name (or repo id) contains this, case-insensitively.
    public var pattern: String? = nil
    public var sort = ListSort.name
    public var environment: [String: String]

    public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }
}

/// One model on this machine: a revision in the Hugging Face cache, or a converted model in
/// phikit's store.
public struct ListedModel: Sendable, Encodable {
    /// The repo id (`mlx-community/Phi-4-mini-instruct-4bit`) or the store name.
    public var name: String
    /// `hf-cache` or `converted`.
    public var source: String
    /// The commit, for cache models.
    public var commit: String?
    /// Branches and tags pointing at it (`main`).
    public var refs: [String]
    public var format: String?
    public var parameters: Int?
    /// Bytes on disk, each blob counted once.
    public var sizeOnDisk: Int
    @ISO8601Date public var lastModified: Date
    /// All files there and the weights open: `run` can use it.
    public var complete: Bool
    /// What makes it incomplete: missing files, partial downloads, broken links.
    public var problems: [String]
    public var path: String

    /// `main (1a2b3c4)`, `1a2b3c4` for a detached revision, `-` for a converted model.
    public var revisionLabel: String {
        guard let commit else { return "-" }
        let short = String(commit.prefix(7))
        return refs.isEmpty ? short : "\(refs.joined(separator: ",")) (\(short))"
    }
}

public struct ModelList: Sendable, Encodable {
    public var models: [ListedModel]
    /// Bytes of everything listed, shared blobs counted once.
    public var totalSize: Int
    /// Bytes held by partial downloads (`phikit rm --partials` removes them).
    public var partialBytes: Int
    public var cacheDirectory: String
    public var storeDirectory: String
}

/// `phikit list`: every model in the Hugging Face cache (one row per revision) and in phikit's
/// store of converted models, with format, parameters, size and completeness.
public func listModels(_ options: ListOptions) -> ModelList {
    let cache = HubCache(root: HubCache.defaultRoot(environment: options.environment))
    let store = ModelStore.modelsDirectory(environment: options.environment)
    var models: [ListedModel] = []
    var total = 0
    var partialBytes = 0
    for repo in cache.scan() where matches(repo.repoID, options.pattern) {
        models += repo.revisions.map { listed($0, in: repo, cache: cache) }
        total += repo.sizeOnDisk
        partialBytes += repo.partialBytes
    }
    for model in storeModels(store) where matches(model.name, options.pattern) {
        models.append(model)
        total += model.sizeOnDisk
    }
    return ModelList(
        models: sorted(models, by: options.sort), totalSize: total, partialBytes: partialBytes,
        cacheDirectory: cache.root, storeDirectory: store)
}

private func matches(_ name: String, _ pattern: String?) -> Bool {
    guard let pattern, !pattern.isEmpty else { return true }
    return name.lowercased().contains(pattern.lowercased())
}

private func sorted(_ models: [ListedModel], by sort: ListSort) -> [ListedModel] {
    models.sorted { a, b in
        switch sort {
        case .name: (a.name, a.revisionLabel) < (b.name, b.revisionLabel)
        case .size: a.sizeOnDisk != b.sizeOnDisk ? a.sizeOnDisk > b.sizeOnDisk : a.name < b.name
        case .modified:
            a.lastModified != b.lastModified ? a.lastModified > b.lastModified : a.name < b.name
        }
    }
}

/// One cache revision, checked against the file list saved at pull time when there is one.
private func listed(_ revision: CachedRevision, in repo: CachedRepo, cache: HubCache) -> ListedModel
{
    var problems: [String] = []
    let broken = revision.files.filter { $0.size == nil }.map(\.path)
    if !broken.isEmpty { problems.append("broken links: " + sample(broken)) }
    if let listing = cache.fileListing(repoID: repo.repoID, commit: revision.commit) {
        let present = Set(revision.files.filter { $0.size != nil }.map(\.path))
        let wanted = listing.filter { FilePatterns.mlxDefaults.matches($0.path) }
        let missing = wanted.map(\.path).filter { !present.contains($0) }
        if !missing.isEmpty {
            problems.append("missing \(missing.count) files: " + sample(missing))
        }
        let names = Set(wanted.map(\.blobName))
        let partials = repo.partials.filter { names.contains($0.blobName) }
        if !partials.isEmpty { problems.append("\(partials.count) partial downloads") }
    }
    let summary = ModelSummary(directory: revision.directory)
    if problems.isEmpty, let problem = summary.weightsProblem { problems.append(problem) }
    return ListedModel(
        name: repo.repoID, source: "hf-cache", commit: revision.commit, refs: revision.refs,
        format: summary.format, parameters: summary.parameters, sizeOnDisk: revision.sizeOnDisk,
        lastModified: revision.lastModified, complete: problems.isEmpty, problems: problems,
        path: revision.directory)
}

/// Converted models: the folders of `store` (a `convert` in progress or killed,
/// `<name>.incomplete-XXXXXX`, is not a model).
private func storeModels(_ store: String) -> [ListedModel] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
    return names.sorted().compactMap { name in
        let path = store + "/" + name
        guard !name.hasPrefix("."), !name.contains(".incomplete-"), !name.contains(".old-"),
            HubCache.isDirectory(path)
        else { return nil }
        let files = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        let stats = FolderStats(path)
        let summary = ModelSummary(directory: path)
        var problems: [String] = []
        if !files.contains("config.json") { problems.append("no config.json") }
        if let problem = summary.weightsProblem { problems.append(problem) }
        return ListedModel(
            name: name, source: "converted", commit: nil, refs: [], format: summary.format,
            parameters: summary.parameters, sizeOnDisk: stats.bytes, lastModified: stats.newest,
            complete: problems.isEmpty, problems: problems, path: path)
    }
}

private func sample(_ paths: [String]) -> String {
    paths.prefix(3).joined(separator: ", ") + (paths.count > 3 ? ", …" : "")
}

import Foundation
import PhiHub

/// A registry entry and whether it is on this machine (`phikit list --available`).
public struct AvailableModel: Sendable, Encodable {
    public var name: String
    public var aliases: [String]
    /// The Hub repo, or nil for a model bundled with phikit.
    public var repo: String?
    public var revision: String
    /// The revision is a commit, so `downloadSize` is exact.
    public var pinned: Bool
    public var parameters: Int?
    public var downloadSize: Int?
    public var description: String?
    /// `bundled`, `downloaded`, `incomplete`, `other revision` or `not downloaded`.
    public var status: String
    /// The registry file the entry comes from (the shipped one or the user's).
    public var registry: String
}

/// Every registry entry with its status in the Hugging Face cache.
public func availableModels(
    environment: [String: String] = ProcessInfo.processInfo.environment
) throws -> [AvailableModel] {
    let registry = try Registry.load(environment: environment)
    let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
    return registry.entries.map { entry in
        AvailableModel(
            name: entry.name, aliases: entry.aliases, repo: entry.repo, revision: entry.revision,
            pinned: entry.isPinned, parameters: entry.parameters, downloadSize: entry.downloadSize,
            description: entry.description, status: status(of: entry, in: cache),
            registry: entry.source)
    }
}

private func status(of entry: RegistryEntry, in cache: HubCache) -> String {
    guard let repo = entry.repo else { return "bundled" }
    guard let cached = cache.scanRepo(repoID: repo), !cached.revisions.isEmpty else {
        return "not downloaded"
    }
    guard let commit = cache.commit(repoID: repo, revision: entry.revision),
        let revision = cached.revisions.first(where: { $0.commit == commit })
    else { return "other revision" }
    if revision.files.contains(where: { $0.size == nil }) { return "incomplete" }
    if let listing = cache.fileListing(repoID: repo, commit: commit) {
        let present = Set(revision.files.map(\.path))
        let wanted = listing.filter { FilePatterns.mlxDefaults.matches($0.path) }
        if wanted.contains(where: { !present.contains($0.path) }) { return "incomplete" }
    }
    return "downloaded"
}

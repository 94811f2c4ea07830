import Foundation
import PhiFormats
import PhiHub

/// What a model's bytes are checked against.
enum BytesReference {
    /// The Hub's file list of the snapshot's commit: saved beside the snapshot by pull (or by
    /// huggingface_hub), or fetched now (`fromHub`).
    case listing([HubFileEntry], fromHub: Bool)
    /// A snapshot without a saved listing, offline: each blob is checked against its own name
    /// (blob names are hashes), but missing and extra files cannot be known.
    case blobNames
    /// What `convert` recorded about its output.
    case manifest(ConvertManifest)
    /// A plain directory: nothing to compare with.
    case none

    var label: String {
        switch self {
        case .listing(_, let fromHub): fromHub ? "hub_api" : "hub_listing"
        case .blobNames: "blob_names"
        case .manifest: "manifest"
        case .none: "none"
        }
    }

    /// The saved listing; else, unless offline, the Hub's (a Hub failure is thrown: verify
    /// could not check, exit 69 and friends); else the blob names. Converted models use their
    /// manifest.
    static func resolve(
        _ target: VerifyTarget, offline: Bool, environment: [String: String],
        cancellation: CancellationToken?, progress: (VerifyProgress) -> Void
    ) throws -> BytesReference {
        if let manifest = target.manifest { return .manifest(manifest) }
        guard let snapshot = target.snapshot else { return .none }
        if let saved = snapshot.cache.fileListing(
            repoID: snapshot.repoID, commit: snapshot.commit)
        {
            return .listing(saved, fromHub: false)
        }
        var configuration = HubConfiguration.from(
            environment: environment, userAgent: "phikit/\(PhiKitVersion.string)")
        configuration.cancellation = cancellation
        if offline || configuration.offline { return .blobNames }
        progress(.fetchingListing(repoID: snapshot.repoID))
        let plan = try SnapshotDownloader(configuration: configuration, cache: snapshot.cache)
            .plan(repoID: snapshot.repoID, revision: snapshot.commit, patterns: FilePatterns())
        return .listing(plan.listing ?? [], fromHub: true)
    }

    /// Which digests `file` needs: SHA-256 always (reported, and what LFS files and manifests
    /// use), the git blob SHA-1 when a listing or the blob's name is one.
    func wantsGitSHA1(_ file: ModelFile) -> Bool {
        if file.blobName?.utf8.count == 40 { return true }
        if case .listing(let entries, _) = self,
            let entry = entries.first(where: { $0.path == file.path })
        {
            return entry.lfs == nil
        }
        return false
    }
}

import Foundation
import PhiFormats

/// The standard Hugging Face cache, read the way huggingface_hub lays it out, so that models
/// pulled by `hf download`, mlx-lm or phikit are shared:
///
///     <root>/models--ORG--NAME/refs/<branch>             (holds the commit hash)
///     <root>/models--ORG--NAME/snapshots/<commit>/<path> → ../../blobs/<sha>
///     <root>/models--ORG--NAME/blobs/<sha256 | git-sha1>
public struct HubCache: Sendable {
    public let root: String

    public init(root: String) { self.root = root }

    /// `HF_HUB_CACHE`, else `HF_HOME/hub`, else `XDG_CACHE_HOME/huggingface/hub`,
    /// else `~/.cache/huggingface/hub` — huggingface_hub's order.
    public static func defaultRoot(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let cache = environment["HF_HUB_CACHE"], !cache.isEmpty { return cache }
        if let home = environment["HF_HOME"], !home.isEmpty { return home + "/hub" }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty { return xdg + "/huggingface/hub" }
        let home = environment["HOME"] ?? NSHomeDirectory()
        return home + "/.cache/huggingface/hub"
    }

    /// `models--ORG--NAME`: huggingface_hub's folder name for a model repo.
    public static func folderName(repoID: String) -> String {
        "models--" + repoID.replacingOccurrences(of: "/", with: "--")
    }

    /// `models--ORG--NAME` → `ORG/NAME`; nil for folders that are not model repos
    /// (`datasets--…`, `.locks`, `CACHEDIR.TAG`).
    public static func repoID(folderName: String) -> String? {
        guard folderName.hasPrefix("models--"), folderName.count > "models--".count else {
            return nil
        }
        return String(folderName.dropFirst("models--".count))
            .replacingOccurrences(of: "--", with: "/")
    }

    /// A snapshot directory of a cache, recognised from its path alone.
    public struct SnapshotPath: Sendable {
        public var cache: HubCache
        public var repoID: String
        public var commit: String
    }

    /// `<root>/models--ORG--NAME/snapshots/<40 hex>` → that cache, repo and commit; nil for any
    /// other directory. The path is taken as it is (resolve symlinks first to recognise a
    /// link into a cache).
    public static func snapshotPath(of directory: String) -> SnapshotPath? {
        let parts = directory.split(separator: "/", omittingEmptySubsequences: false)
            .map(String.init)
        guard parts.count >= 4, parts[parts.count - 2] == "snapshots",
            isCommitHash(parts[parts.count - 1]),
            let repoID = repoID(folderName: parts[parts.count - 3])
        else { return nil }
        let root = parts[..<(parts.count - 3)].joined(separator: "/")
        return SnapshotPath(
            cache: HubCache(root: root.isEmpty ? "/" : root), repoID: repoID,
            commit: parts[parts.count - 1])
    }

    public func repoDirectory(repoID: String) -> String {
        root + "/" + Self.folderName(repoID: repoID)
    }

    /// The commit a branch or tag points at (`refs/<revision>`), or the revision itself when it
    /// is already a 40-hex commit hash.
    public func commit(repoID: String, revision: String) -> String? {
        if Self.isCommitHash(revision) { return revision }
        let refPath = repoDirectory(repoID: repoID) + "/refs/" + revision
        guard let data = try? LocalFile.read(refPath, limit: 4096),
            let text = String(bytes: data, encoding: .utf8)
        else { return nil }
        let commit = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return Self.isCommitHash(commit) ? commit : nil
    }

    /// The snapshot directory of `repoID` at `revision`, which must already be on disk.
    /// Never touches the network: `run` and `convert` work offline on what `pull` fetched.
    public func snapshotDirectory(
        repoID: String, revision: String = "main"
    ) throws(HubCacheError)
        -> String
    {
        guard let commit = commit(repoID: repoID, revision: revision) else {
            throw .notCached(repoID: repoID, revision: revision, root: root)
        }
        let snapshot = repoDirectory(repoID: repoID) + "/snapshots/" + commit
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: snapshot, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { throw .notCached(repoID: repoID, revision: revision, root: root) }
        return snapshot
    }

    static func isCommitHash(_ text: String) -> Bool {
        text.utf8.count == 40
            && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }
}

public enum HubCacheError: UserFacingError, Equatable {
    case notCached(repoID: String, revision: String, root: String)

    public var message: String {
        switch self {
        case .notCached(let repoID, let revision, let root):
            "model '\(repoID)' (revision \(revision)) is not in the Hugging Face cache at \(root)"
        }
    }
    public var hint: String? {
        switch self {
        case .notCached(let repoID, let revision, _):
            revision == "main"
                ? "run `phikit pull \(repoID)` first"
                : "run `phikit pull \(repoID) --revision \(revision)` first"
        }
    }
    public var exitCode: ExitCode { .noInput }
}

import Foundation
import PhiHub

/// The model a convert reads: a directory as typed, or a Hub id / registry alias resolved to
/// its snapshot in the Hugging Face cache (no network: `pull` first).
struct ConvertSource {
    /// The directory holding config.json and the weights.
    var directory: String
    /// The Hub repo, when the source came from the cache (for the model card's base_model).
    var hubRepo: String?
    /// Short name for the default output (`Phi-3.5-mini-instruct`).
    var name: String

    static func resolve(_ text: String, environment: [String: String]) throws -> ConvertSource {
        switch try ModelReference.resolve(text, environment: environment) {
        case .directory(let path):
            let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
            return ConvertSource(
                directory: absolute, hubRepo: nil, name: name(ofDirectory: absolute))
        case .hub(let repoID, let revision, _):
            let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
            let snapshot = try cache.snapshotDirectory(repoID: repoID, revision: revision)
            let name = repoID.split(separator: "/").last.map(String.init) ?? repoID
            return ConvertSource(directory: snapshot, hubRepo: repoID, name: name)
        }
    }

    /// The directory's own name, except for HF cache snapshots
    /// (`…/models--org--NAME/snapshots/<commit>`), which are named after the repo.
    static func name(ofDirectory path: String) -> String {
        let parts = path.split(separator: "/").map(String.init)
        if parts.count >= 3, parts[parts.count - 2] == "snapshots",
            parts[parts.count - 3].hasPrefix("models--"),
            let repoName = parts[parts.count - 3].components(separatedBy: "--").last
        {
            return repoName
        }
        return parts.last ?? "model"
    }
}

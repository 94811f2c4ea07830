import Foundation
import PhiHub

/// What `phikit rm --partials` removed (or, dry, would remove).
public struct PruneResult: Sendable, Encodable {
    public struct Item: Sendable, Encodable, Equatable {
        public var path: String
        public var bytes: Int
        /// `download` (a `blobs/*.incomplete` file) or `convert` (an `<out>.incomplete-*` folder).
        public var kind: String
    }
    public var removed: [Item]
    /// Partials a running pull or convert is writing: left alone.
    public var live: [Item]
    public var freedBytes: Int { removed.reduce(0) { $0 + $1.bytes } }
}

/// Removes every partial download in the Hugging Face cache and every temporary folder a
/// killed `convert` left in phikit's model store — never one that a live process is writing
/// (it holds the blob's lock, or the convert folder's lock).
public func prunePartials(
    dryRun: Bool = false, environment: [String: String] = ProcessInfo.processInfo.environment
) -> PruneResult {
    var result = PruneResult(removed: [], live: [])
    let cache = HubCache(root: HubCache.defaultRoot(environment: environment))
    for repo in cache.scan() {
        for partial in repo.partials {
            let item = PruneResult.Item(path: partial.path, bytes: partial.bytes, kind: "download")
            if cache.isLive(partial, repoID: repo.repoID) {
                result.live.append(item)
            } else if dryRun || cache.removeStalePartial(partial.path, repoID: repo.repoID) {
                result.removed.append(item)
            } else {
                result.live.append(item)
            }
        }
    }
    // Convert folders: those in the store, and those a record places beside any -o.
    let store = ModelStore.modelsDirectory(environment: environment)
    let names = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
    var folders: [(folder: String, record: String?)] = names.sorted()
        .filter { $0.contains(".incomplete-") }.map { (store + "/" + $0, nil) }
    func resolved(_ path: String) -> String {
        URL(fileURLWithPath: path).resolvingSymlinksInPath().path
    }
    for found in ConvertPartialRecords.folders(environment: environment) {
        if let i = folders.firstIndex(where: { resolved($0.folder) == resolved(found.folder) }) {
            folders[i].record = found.record
        } else {
            folders.append(found)
        }
    }
    for (path, record) in folders {
        let item = PruneResult.Item(path: path, bytes: FolderStats(path).bytes, kind: "convert")
        guard let lock = DirectoryLock(path: path) else {
            result.live.append(item)
            continue
        }
        if !dryRun {
            try? FileManager.default.removeItem(atPath: path)
            if let record { try? FileManager.default.removeItem(atPath: record) }
        }
        lock.release()
        result.removed.append(item)
    }
    return result
}

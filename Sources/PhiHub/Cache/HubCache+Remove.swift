import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What removing some revisions of a repo deletes, decided before anything is touched —
/// huggingface_hub's `delete_revisions` strategy: the refs that point at them, their snapshot
/// folders, and only the blobs no remaining revision links to. Removing every revision removes
/// the repo folder. Stale partial downloads go too; one a live process is writing blocks it.
public struct CacheDeletion: Sendable, Equatable {
    public var repoID: String
    public var commits: [String]
    public var refFiles: [String]
    public var snapshotDirectories: [String]
    public var listingFiles: [String]
    public var blobFiles: [String]
    /// Partials no process is writing (their blob lock is free).
    public var stalePartials: [String]
    /// Partials a running process holds the lock of: they are left alone, and while there is
    /// one, the repo folder is not removed.
    public var livePartials: [String]
    /// Set when the whole repo folder goes.
    public var repoDirectory: String?
    public var freedBytes: Int
    /// Blobs of the removed revisions that stay because another revision uses them.
    public var sharedBlobsKept: Int
}

extension HubCache {
    /// The deletion of `commits` of `repo` (all of its revisions when nil).
    public func deletionPlan(_ repo: CachedRepo, commits: Set<String>? = nil) -> CacheDeletion {
        let removed = repo.revisions.filter { commits?.contains($0.commit) ?? true }
        let kept = repo.revisions.filter { !(commits?.contains($0.commit) ?? true) }
        let keptBlobs = kept.reduce(into: Set<String>()) { $0.formUnion($1.blobPaths) }
        let blobsDir = repo.directory + "/blobs/"
        var blobSizes: [String: Int] = [:]
        var shared = Set<String>()
        for revision in removed {
            for file in revision.files {
                guard let size = file.size, file.contentPath.hasPrefix(blobsDir) else { continue }
                if keptBlobs.contains(file.contentPath) {
                    shared.insert(file.contentPath)
                } else {
                    blobSizes[file.contentPath] = size
                }
            }
        }
        let live = repo.partials.filter { isLive($0, repoID: repo.repoID) }
        let stale = repo.partials.filter { !live.contains($0) }
        let wholeRepo = kept.isEmpty && live.isEmpty
        return CacheDeletion(
            repoID: repo.repoID, commits: removed.map(\.commit),
            refFiles: removed.flatMap { r in r.refs.map { repo.directory + "/refs/" + $0 } },
            snapshotDirectories: removed.map(\.directory),
            listingFiles: removed.map { listingPath(repoID: repo.repoID, commit: $0.commit) }
                .filter { FileManager.default.fileExists(atPath: $0) },
            blobFiles: blobSizes.keys.sorted(), stalePartials: stale.map(\.path),
            livePartials: live.map(\.path), repoDirectory: wholeRepo ? repo.directory : nil,
            freedBytes: blobSizes.values.reduce(0, +) + stale.reduce(0) { $0 + $1.bytes },
            sharedBlobsKept: shared.count)
    }

    /// Carries out a plan in huggingface_hub's order — refs, then snapshots, then blobs — so
    /// an interruption never leaves a ref pointing at a missing snapshot or a link at a
    /// missing blob.
    public func delete(_ plan: CacheDeletion) throws(FileError) {
        if let escaped = escapingPath(plan) {
            throw FileError(
                path: escaped, operation: "remove (it lies outside the cache)", errno: EXDEV)
        }
        for path in plan.refFiles { try remove(path) }
        for path in plan.snapshotDirectories { try remove(path) }
        for path in plan.listingFiles { try remove(path) }
        for path in plan.blobFiles { try remove(path) }
        for path in plan.stalePartials { removeStalePartial(path, repoID: plan.repoID) }
        if let directory = plan.repoDirectory {
            try remove(directory)
            try? FileManager.default.removeItem(atPath: locksDirectory(repoID: plan.repoID))
        }
    }

    /// `.locks/models--ORG--NAME`: the blob locks of a repo, removed with the whole repo.
    public func locksDirectory(repoID: String) -> String {
        root + "/.locks/" + Self.folderName(repoID: repoID)
    }

    /// The first path of `plan` that a symbolic link inside the repo folder (`snapshots/` or
    /// `blobs/` pointing elsewhere) would carry outside it, or nil when every path is where it
    /// looks. Deleting through such a link deleted a user's files.
    public func escapingPath(_ plan: CacheDeletion) -> String? {
        guard let repo = plan.repoDirectory ?? plan.snapshotDirectories.first.map(repoOf) else {
            return nil
        }
        let paths =
            plan.refFiles + plan.snapshotDirectories + plan.listingFiles + plan.blobFiles
            + plan.stalePartials
        return paths.first { !Self.isConfined($0, below: repo) }
    }

    private func repoOf(_ snapshot: String) -> String {
        ((snapshot as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent
    }

    /// True when `path`'s folder is really `directory`/… with no symbolic link on the way (the
    /// item itself may be a link: removing a link removes only the link). A path whose folder
    /// does not exist has nothing to delete.
    static func isConfined(_ path: String, below directory: String) -> Bool {
        guard path.hasPrefix(directory + "/") else { return false }
        let parent = (path as NSString).deletingLastPathComponent
        guard let realParent = realPath(parent) else { return true }
        guard let realDirectory = realPath(directory) else { return false }
        return realParent == realDirectory + parent.dropFirst(directory.count)
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether a process is writing this partial right now: it holds the blob's lock.
    public func isLive(_ partial: CachedPartial, repoID: String) -> Bool {
        let lockPath = lockPath(repoID: repoID, blobName: partial.blobName)
        guard FileManager.default.fileExists(atPath: lockPath) else { return false }
        let lock = FileLock(path: lockPath)
        guard (try? lock.tryAcquire()) == true else { return true }
        lock.release()
        return false
    }

    /// Deletes a partial while holding its blob's lock, so a download starting at that moment
    /// waits instead of appending to a file that is going away. False if it turned out live.
    @discardableResult
    public func removeStalePartial(_ path: String, repoID: String) -> Bool {
        let name = (path as NSString).lastPathComponent
        var blob = String(name.dropLast(".incomplete".count))
        if let dot = blob.lastIndex(of: "."), blob.distance(from: dot, to: blob.endIndex) == 9 {
            blob = String(blob[..<dot])
        }
        let lockPath = lockPath(repoID: repoID, blobName: blob)
        guard
            FileManager.default.fileExists(atPath: (lockPath as NSString).deletingLastPathComponent)
        else {
            unlink(path)  // no lock folder: nobody can be writing it
            return true
        }
        let lock = FileLock(path: lockPath)
        guard (try? lock.tryAcquire()) == true else { return false }
        defer { lock.release() }
        unlink(path)
        return true
    }

    private func remove(_ path: String) throws(FileError) {
        var st = stat()
        guard lstat(path, &st) == 0 else { return }  // already gone
        do {
            try FileManager.default.removeItem(atPath: path)
        } catch {
            throw FileError(path: path, operation: "remove", errno: EACCES)
        }
    }
}

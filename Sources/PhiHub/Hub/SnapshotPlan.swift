import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a pull will do, decided before any file byte moves: the commit, the files the
/// patterns select, what each already has in the cache, and whether the disk can hold the rest.
public struct SnapshotPlan: Sendable {
    public let repoID: String
    /// What the user asked for (branch, tag or commit); `refs/<revision>` is written at the end.
    public let revision: String
    public let commit: String
    /// The selected files, sorted by path.
    public let files: [SnapshotFile]
    /// Every file of the repo at this commit, as the Hub listed it (nil offline without one).
    public let listing: [HubFileEntry]?
    /// True when the listing came from the cache (no tree request was made).
    public let listingWasCached: Bool
    public let snapshotDirectory: String
    /// Free bytes on the cache's file system (nil if it cannot be measured).
    public let freeBytes: Int?

    public var totalBytes: Int { files.reduce(0) { $0 + $1.entry.size } }
    /// Bytes already in the cache: complete blobs plus the partials that will be resumed.
    public var cachedBytes: Int { files.reduce(0) { $0 + $1.bytesPresent } }
    public var bytesToDownload: Int { totalBytes - cachedBytes }
    public var isComplete: Bool { files.allSatisfy { $0.state == .cached } }
    public var filesToDownload: [SnapshotFile] {
        files.filter { $0.state != .cached && $0.state != .blobPresent }
    }
}

public struct SnapshotFile: Sendable, Equatable {
    public enum State: Sendable, Equatable {
        /// In the snapshot, linked to a complete blob.
        case cached
        /// The blob is there (another revision or tool fetched it); only the link is missing.
        case blobPresent
        /// A partial of this many bytes will be resumed.
        case partial(Int)
        case missing
    }

    public var entry: HubFileEntry
    public var state: State

    public var bytesPresent: Int {
        switch state {
        case .cached, .blobPresent: entry.size
        case .partial(let bytes): bytes
        case .missing: 0
        }
    }
}

extension HubCache {
    /// The state of each file in the cache, by looking (no hashing: `verify` does that).
    func state(of entry: HubFileEntry, repoID: String, commit: String) -> SnapshotFile.State {
        let blob = blobPath(repoID: repoID, blobName: entry.blobName)
        guard Self.isCompleteBlob(blob, size: entry.size) else {
            var st = stat()
            let partial = partialPath(repoID: repoID, blobName: entry.blobName)
            if stat(partial, &st) == 0, st.st_size > 0, Int(st.st_size) <= entry.size {
                return .partial(Int(st.st_size))
            }
            return .missing
        }
        let pointer = pointerPath(repoID: repoID, commit: commit, path: entry.path)
        let target = try? FileManager.default.destinationOfSymbolicLink(atPath: pointer)
        return target == Self.linkTarget(path: entry.path, blobName: entry.blobName)
            ? .cached : .blobPresent
    }

    /// Free bytes for an unprivileged user on the file system that holds (or will hold) `path`.
    static func freeBytes(at path: String) -> Int? {
        var directory = path
        while !FileManager.default.fileExists(atPath: directory) {
            let parent = (directory as NSString).deletingLastPathComponent
            guard parent != directory, !parent.isEmpty else { return nil }
            directory = parent
        }
        var info = statvfs()
        guard statvfs(directory, &info) == 0 else { return nil }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }
}

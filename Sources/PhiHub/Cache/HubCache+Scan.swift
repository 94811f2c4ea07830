import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A model repo in the cache, read the way `huggingface_hub.scan_cache_dir()` reads it.
public struct CachedRepo: Sendable {
    public var repoID: String
    public var directory: String
    public var revisions: [CachedRevision]
    /// Downloads in progress or abandoned (`blobs/*.incomplete`).
    public var partials: [CachedPartial]
    /// Blobs referenced by any revision, each counted once (as huggingface_hub counts).
    public var sizeOnDisk: Int
    /// Bytes in partial downloads.
    public var partialBytes: Int { partials.reduce(0) { $0 + $1.bytes } }
}

public struct CachedRevision: Sendable {
    public var commit: String
    /// Branches and tags that point here (`main`); empty for a detached revision.
    public var refs: [String]
    public var directory: String
    public var files: [SnapshotEntry]
    /// Blobs this revision links to, each counted once.
    public var sizeOnDisk: Int
    /// Newest modification time of its blobs (or of the folder when it has none).
    public var lastModified: Date
    /// Blob paths (resolved) this revision uses.
    public var blobPaths: Set<String>
}

/// One file of a snapshot folder.
public struct SnapshotEntry: Sendable, Equatable {
    /// Path inside the snapshot, `/`-separated.
    public var path: String
    /// The blob file name the link points to (nil for a plain file or a foreign link).
    public var blobName: String?
    /// Resolved path of the content (the blob, or the file itself).
    public var contentPath: String
    /// Size of the content; nil when the link is broken.
    public var size: Int?
    public var modified: Date?
}

public struct CachedPartial: Sendable, Equatable {
    public var path: String
    /// The blob it will become (without huggingface_hub's `.<8 hex>` suffix).
    public var blobName: String
    public var bytes: Int
    public var modified: Date
}

extension HubCache {
    /// Every model repo in the cache, sorted by id. Folders that are not model repos
    /// (`datasets--…`, `.locks`, `CACHEDIR.TAG`) are skipped.
    public func scan() -> [CachedRepo] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        return names.filter { Self.repoID(folderName: $0) != nil }.sorted()
            .compactMap { scanRepo(folder: $0) }
    }

    public func scanRepo(repoID: String) -> CachedRepo? {
        scanRepo(folder: Self.folderName(repoID: repoID))
    }

    private func scanRepo(folder: String) -> CachedRepo? {
        let directory = root + "/" + folder
        guard Self.isDirectory(directory + "/snapshots"),
            let repoID = Self.repoID(folderName: folder)
        else { return nil }
        let refs = readRefs(directory + "/refs")
        let commits =
            ((try? FileManager.default.contentsOfDirectory(atPath: directory + "/snapshots")) ?? [])
            .filter { Self.isDirectory(directory + "/snapshots/" + $0) }.sorted()
        var sizes: [String: Int] = [:]
        let revisions = commits.map { commit in
            let revision = scanRevision(
                repoID: repoID, commit: commit,
                refs: refs.filter { $0.value == commit }.map(\.key).sorted())
            for file in revision.files {
                if let size = file.size { sizes[file.contentPath] = size }
            }
            return revision
        }
        return CachedRepo(
            repoID: repoID, directory: directory, revisions: revisions,
            partials: partials(repoID: repoID), sizeOnDisk: sizes.values.reduce(0, +))
    }

    private func scanRevision(repoID: String, commit: String, refs: [String]) -> CachedRevision {
        let directory = snapshotPath(repoID: repoID, commit: commit)
        let files = snapshotFiles(repoID: repoID, commit: commit)
        var blobs: [String: Int] = [:]
        for file in files { if let size = file.size { blobs[file.contentPath] = size } }
        let newest = files.compactMap(\.modified).max() ?? Self.modified(directory) ?? Date()
        return CachedRevision(
            commit: commit, refs: refs, directory: directory, files: files,
            sizeOnDisk: blobs.values.reduce(0, +), lastModified: newest,
            blobPaths: Set(blobs.keys))
    }

    /// The files of `snapshots/<commit>`, recursively, with what each link points to.
    public func snapshotFiles(repoID: String, commit: String) -> [SnapshotEntry] {
        let directory = snapshotPath(repoID: repoID, commit: commit)
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var entries: [SnapshotEntry] = []
        while let relative = walker.nextObject() as? String {
            let full = directory + "/" + relative
            var lst = stat()
            guard lstat(full, &lst) == 0, lst.st_mode & S_IFMT != S_IFDIR else { continue }
            var content = full
            var blobName: String?
            if lst.st_mode & S_IFMT == S_IFLNK,
                let target = try? FileManager.default.destinationOfSymbolicLink(atPath: full)
            {
                let base = (full as NSString).deletingLastPathComponent
                content =
                    URL(fileURLWithPath: target, relativeTo: URL(fileURLWithPath: base + "/"))
                    .standardizedFileURL.path
                if target.contains("/blobs/") { blobName = (target as NSString).lastPathComponent }
            }
            var st = stat()
            let exists = stat(content, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
            entries.append(
                SnapshotEntry(
                    path: relative, blobName: blobName, contentPath: content,
                    size: exists ? Int(st.st_size) : nil,
                    modified: exists ? Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec)) : nil)
            )
        }
        return entries.sorted { Self.pythonOrder($0.path, $1.path) }
    }

    /// `blobs/*.incomplete`: phikit's `<blob>.incomplete` and huggingface_hub 2.4's
    /// `<blob>.<8 hex>.incomplete`.
    public func partials(repoID: String) -> [CachedPartial] {
        let blobs = repoDirectory(repoID: repoID) + "/blobs"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: blobs)) ?? []
        return names.filter { $0.hasSuffix(".incomplete") }.sorted().compactMap { name in
            var st = stat()
            let path = blobs + "/" + name
            guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return nil }
            var blob = String(name.dropLast(".incomplete".count))
            if let dot = blob.lastIndex(of: "."), blob.distance(from: dot, to: blob.endIndex) == 9 {
                blob = String(blob[..<dot])
            }
            return CachedPartial(
                path: path, blobName: blob, bytes: Int(st.st_size),
                modified: Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec)))
        }
    }

    /// `refs/**` → commit, as huggingface_hub reads them (content stripped of whitespace here).
    private func readRefs(_ directory: String) -> [String: String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [:] }
        var refs: [String: String] = [:]
        while let name = walker.nextObject() as? String {
            let path = directory + "/" + name
            guard !Self.isDirectory(path), !name.hasSuffix(".incomplete"),
                let data = try? LocalFile.read(path, limit: 4096)
            else { continue }
            refs[name] = String(decoding: data, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return refs
    }

    public static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory)
            && isDirectory.boolValue
    }

    static func modified(_ path: String) -> Date? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(st.st_mtim.tv_sec))
    }
}

import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where each piece of a downloaded repo goes, and the writes that put it there, byte for byte
/// as huggingface_hub 2.4 does (checked by scripts/hub_interop.py):
///
///     refs/<revision>                      the commit, no trailing newline
///     blobs/<sha256 | git-sha1>            file content (0644 before umask)
///     blobs/<name>.incomplete              a download in progress (phikit's; resumable)
///     snapshots/<commit>/<path>            symlink → ../../blobs/<name> (+ ../ per folder)
///     <root>/.locks/models--ORG--NAME/<name>.lock   flock'd while a blob is written
///     <root>/CACHEDIR.TAG                  marks the cache for backup tools
extension HubCache {
    public func blobPath(repoID: String, blobName: String) -> String {
        repoDirectory(repoID: repoID) + "/blobs/" + blobName
    }

    /// The resumable partial of a blob (huggingface_hub 2.4 writes `<name>.<8 hex>.incomplete`
    /// instead, which nobody can resume; `rm --partials` removes both kinds).
    public func partialPath(repoID: String, blobName: String) -> String {
        blobPath(repoID: repoID, blobName: blobName) + ".incomplete"
    }

    public func lockPath(repoID: String, blobName: String) -> String {
        root + "/.locks/" + Self.folderName(repoID: repoID) + "/" + blobName + ".lock"
    }

    /// `snapshots/<commit>`, whether or not it exists yet.
    public func snapshotPath(repoID: String, commit: String) -> String {
        repoDirectory(repoID: repoID) + "/snapshots/" + commit
    }

    public func pointerPath(repoID: String, commit: String, path: String) -> String {
        snapshotPath(repoID: repoID, commit: commit) + "/" + path
    }

    /// The symlink text for a repo path: `../../blobs/<name>`, with one more `../` for each
    /// folder the path is in (`os.path.relpath`, as huggingface_hub computes it).
    static func linkTarget(path: String, blobName: String) -> String {
        let depth = path.utf8.filter { $0 == UInt8(ascii: "/") }.count
        return String(repeating: "../", count: 2 + depth) + "blobs/" + blobName
    }

    /// Makes `snapshots/<commit>/<path>` point at its blob. Folders on the way are created and
    /// must be real folders: a symlink (or file) in the middle would lead outside the snapshot.
    func link(repoID: String, commit: String, path: String, blobName: String) throws(HubError) {
        let snapshot = snapshotPath(repoID: repoID, commit: commit)
        try makeDirectory(snapshot)
        var directory = snapshot
        let parts = path.split(separator: "/").map(String.init)
        for part in parts.dropLast() {
            directory += "/" + part
            var st = stat()
            if lstat(directory, &st) == 0 {
                guard st.st_mode & S_IFMT == S_IFDIR else {
                    throw .unsafePath(
                        repoID: repoID, path: path, reason: "goes through a file or symlink")
                }
            } else if mkdir(directory, 0o755) != 0 && errno != EEXIST {
                throw .local(
                    FileError(path: directory, operation: "create directory", errno: errno))
            }
        }
        let pointer = snapshot + "/" + path
        let target = Self.linkTarget(path: path, blobName: blobName)
        if let existing = try? FileManager.default.destinationOfSymbolicLink(atPath: pointer),
            existing == target
        {
            return
        }
        unlink(pointer)  // a stale or foreign entry; huggingface_hub replaces it the same way
        if symlink(target, pointer) != 0 && errno != EEXIST {
            throw .local(FileError(path: pointer, operation: "create symlink", errno: errno))
        }
    }

    /// `refs/<revision>` ← commit, atomically, without a trailing newline (huggingface_hub's
    /// format). Nothing is written when the revision already is the commit.
    func writeRef(repoID: String, revision: String, commit: String) throws(HubError) {
        guard revision != commit else { return }
        guard Self.isSafeRefName(revision) else {
            throw .unsafePath(repoID: repoID, path: "refs/" + revision, reason: "is not a ref name")
        }
        let path = repoDirectory(repoID: repoID) + "/refs/" + revision
        if let current = FileManager.default.contents(atPath: path),
            String(decoding: current, as: UTF8.self) == commit
        {
            return
        }
        do {
            try FileManager.default.createDirectory(
                atPath: (path as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true)
            try AtomicFile.write(Array(commit.utf8), to: path)
        } catch let error as FileError {
            throw .local(error)
        } catch {
            throw .local(FileError(path: path, operation: "write", errno: EIO))
        }
    }

    /// Branch and tag names may hold `/` (`refs/pr/1`) but must stay inside `refs/`.
    static func isSafeRefName(_ name: String) -> Bool {
        RepoPath.problem(name) == nil
    }

    /// `CACHEDIR.TAG` in the cache root, as huggingface_hub writes it (backup tools skip the
    /// cache); best effort.
    func ensureCacheDirTag() {
        let path = root + "/CACHEDIR.TAG"
        guard !FileManager.default.fileExists(atPath: path) else { return }
        try? AtomicFile.write(Array(Self.cacheDirTag.utf8), to: path)
    }

    static let cacheDirTag =
        "Signature: 8a477f597d28d172789f06886806bc55\n"
        + "# This file is a cache directory tag created by huggingface_hub.\n"
        + "# For information about cache directory tags, see:\n"
        + "#\thttps://bford.info/cachedir/\n"

    /// Creates `path` and its parents (blobs/, .locks/…).
    func makeDirectory(_ path: String) throws(HubError) {
        do {
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .local(FileError(path: path, operation: "create directory", errno: EACCES))
        }
    }
}

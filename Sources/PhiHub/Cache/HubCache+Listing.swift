import Foundation
import PhiFormats

/// The Hub's file list of a commit, kept beside the snapshot so that `verify`, `list` and an
/// offline `pull` know what a complete snapshot holds, with sizes and hashes, without the network.
///
/// It is huggingface_hub 2.4's own tree cache — `models--ORG--NAME/trees/<commit>.json`, written
/// byte for byte as its `write_tree_cache` does (`json.dump(…, indent=1)`, paths sorted):
///
///     {"format_version": 1, "files": {"config.json": {"size": 519, "blob_id": "<git sha1>"},
///      "model.safetensors": {"size": …, "blob_id": …, "lfs_sha256": …, "lfs_size": …}}}
///
/// so each tool reuses the listing the other fetched, and `scan_cache_dir()` ignores it.
extension HubCache {
    public static let listingFormatVersion = 1

    public func listingPath(repoID: String, commit: String) -> String {
        repoDirectory(repoID: repoID) + "/trees/" + commit + ".json"
    }

    /// Every file of `repoID` at `commit` as the Hub listed it when it was pulled (by phikit or
    /// huggingface_hub), or nil when no listing was saved (or it is unreadable or of another
    /// format version). Sorted by path.
    public func fileListing(repoID: String, commit: String) -> [HubFileEntry]? {
        guard Self.isCommitHash(commit),
            let data = FileManager.default.contents(
                atPath: listingPath(repoID: repoID, commit: commit)),
            let json = try? JSONValue(parsing: Array(data)),
            json["format_version"]?.intValue == Self.listingFormatVersion,
            let files = json["files"]?.objectValue
        else { return nil }
        var entries: [HubFileEntry] = []
        for (path, info) in files {
            guard let size = info["size"]?.intValue, size >= 0,
                let blobID = info["blob_id"]?.stringValue
            else { return nil }
            var lfs: HubFileEntry.LFSObject?
            if let sha = info["lfs_sha256"]?.stringValue {
                guard let lfsSize = info["lfs_size"]?.intValue else { return nil }
                lfs = .init(sha256: sha, size: lfsSize)
            }
            entries.append(
                HubFileEntry(
                    path: path, size: size, blobID: blobID, lfs: lfs,
                    xetHash: info["xet_hash"]?.stringValue))
        }
        return entries.sorted { Self.pythonOrder($0.path, $1.path) }
    }

    /// Saves the listing atomically (`trees/<commit>.json.incomplete`, fsync, rename).
    public func saveFileListing(
        _ files: [HubFileEntry], repoID: String, commit: String
    ) throws(FileError) {
        let path = listingPath(repoID: repoID, commit: commit)
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw FileError(path: directory, operation: "create directory", errno: EACCES)
        }
        try AtomicFile.write(Array(Self.listingJSON(files).utf8), to: path)
    }

    /// The listing as huggingface_hub's `write_tree_cache` serialises it.
    static func listingJSON(_ files: [HubFileEntry]) -> String {
        let sorted = files.sorted { pythonOrder($0.path, $1.path) }
        let members: [(key: String, value: JSONValue)] = sorted.map { file in
            var info: [(key: String, value: JSONValue)] = [
                ("size", .int(file.size)), ("blob_id", .string(file.blobID)),
            ]
            if let lfs = file.lfs {
                info.append(("lfs_sha256", .string(lfs.sha256)))
                info.append(("lfs_size", .int(lfs.size)))
            }
            if let xet = file.xetHash { info.append(("xet_hash", .string(xet))) }
            return (file.path, .object(info))
        }
        let document: JSONValue = .object([
            ("format_version", .int(listingFormatVersion)), ("files", .object(members)),
        ])
        return document.pythonJSONDump(indent: 1)
    }

    /// Python's `sorted()` order for strings: by code point.
    static func pythonOrder(_ a: String, _ b: String) -> Bool {
        a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars)
    }
}

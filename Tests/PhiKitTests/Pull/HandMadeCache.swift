import Foundation
import PhiFormats

/// Lays a model directory out in a Hugging Face cache by hand, as huggingface_hub 2.4 does
/// (blobs named by sha256 / git sha1, relative links, refs/<branch>, trees/<commit>.json), so
/// PhiKit's pull, list and rm are tested against the format rather than against PhiHub's writer.
enum HandMadeCache {
    /// Adds `files` (path → bytes; `*.safetensors` as LFS) as revision `commit` of `repoID`,
    /// with `ref` pointing at it. Returns the snapshot directory.
    @discardableResult
    static func add(
        _ files: [String: [UInt8]], repoID: String, commit: String, ref: String? = "main",
        root: URL, writeListing: Bool = true
    ) throws -> URL {
        let repo = root.appendingPathComponent(
            "models--" + repoID.replacingOccurrences(of: "/", with: "--"))
        let snapshot = repo.appendingPathComponent("snapshots/" + commit)
        let fm = FileManager.default
        try fm.createDirectory(
            at: repo.appendingPathComponent("blobs"), withIntermediateDirectories: true)
        var listing: [String] = []
        for (path, bytes) in files.sorted(by: { $0.key < $1.key }) {
            let lfs = path.hasSuffix(".safetensors")
            let blob = lfs ? SHA256Hasher.hex(of: bytes) : GitBlobSHA1.hex(of: bytes)
            try Data(bytes).write(to: repo.appendingPathComponent("blobs/" + blob))
            let link = snapshot.appendingPathComponent(path)
            try fm.createDirectory(
                at: link.deletingLastPathComponent(), withIntermediateDirectories: true)
            let depth = path.filter { $0 == "/" }.count
            try fm.createSymbolicLink(
                atPath: link.path,
                withDestinationPath: String(repeating: "../", count: 2 + depth) + "blobs/" + blob)
            let blobID = lfs ? String(repeating: "0", count: 40) : blob
            var entry =
                "  \"\(path)\": {\n   \"size\": \(bytes.count),\n   \"blob_id\": \"\(blobID)\""
            if lfs {
                entry += ",\n   \"lfs_sha256\": \"\(blob)\",\n   \"lfs_size\": \(bytes.count)"
            }
            listing.append(entry + "\n  }")
        }
        if let ref {
            try fm.createDirectory(
                at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
            try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/" + ref))
        }
        if writeListing {
            try fm.createDirectory(
                at: repo.appendingPathComponent("trees"), withIntermediateDirectories: true)
            let json =
                "{\n \"format_version\": 1,\n \"files\": {\n" + listing.joined(separator: ",\n")
                + "\n }\n}"
            try Data(json.utf8).write(to: repo.appendingPathComponent("trees/\(commit).json"))
        }
        return snapshot
    }

    /// The files of a model directory (config.json, weights…), for `add`.
    static func files(of directory: URL) throws -> [String: [UInt8]] {
        var files: [String: [UInt8]] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[name] = Array(try Data(contentsOf: directory.appendingPathComponent(name)))
        }
        return files
    }
}

import PhiFormats

/// One file of a repo at a commit, as the Hub's tree API lists it
/// (`/api/models/{repo}/tree/{commit}?recursive=true`).
public struct HubFileEntry: Sendable, Equatable, Hashable {
    /// `/`-separated path inside the repo.
    public var path: String
    /// Size in bytes of the file itself (for LFS files, of the LFS object, not the pointer).
    public var size: Int
    /// The git blob id (SHA-1 of `blob <size>\0` + content; for LFS files, of the pointer).
    public var blobID: String
    /// The LFS object, for files stored in LFS (the weights).
    public var lfs: LFSObject?
    /// Xet content hash, when the Hub reports one (kept so huggingface_hub can use it).
    public var xetHash: String?

    public struct LFSObject: Sendable, Equatable, Hashable {
        /// SHA-256 of the content, lowercase hex: the `X-Linked-Etag` and the blob's name.
        public var sha256: String
        public var size: Int

        public init(sha256: String, size: Int) {
            self.sha256 = sha256
            self.size = size
        }
    }

    public init(
        path: String, size: Int, blobID: String, lfs: LFSObject? = nil, xetHash: String? = nil
    ) {
        self.path = path
        self.size = size
        self.blobID = blobID
        self.lfs = lfs
        self.xetHash = xetHash
    }

    /// The file's name in `blobs/`: the SHA-256 for LFS files, the git blob id otherwise
    /// (what huggingface_hub uses, so both tools share blobs).
    public var blobName: String { lfs?.sha256 ?? blobID }

    /// What the downloaded bytes must hash to.
    var expectedDigest: Digest {
        lfs.map { .sha256($0.sha256) } ?? .gitBlobSHA1(blobID)
    }

    enum Digest: Equatable {
        case sha256(String)
        case gitBlobSHA1(String)

        var algorithm: String {
            switch self {
            case .sha256: "sha256"
            case .gitBlobSHA1: "git-sha1"
            }
        }

        var hex: String {
            switch self {
            case .sha256(let hex), .gitBlobSHA1(let hex): hex
            }
        }
    }
}

/// Rules for repo file paths before they touch the disk: a malicious listing must not write
/// outside `snapshots/<commit>/` (huggingface_hub's `_validate_relative_filename`, stricter).
enum RepoPath {
    /// Why `path` is unsafe as a path relative to the snapshot directory, or nil if it is fine.
    static func problem(_ path: String) -> String? {
        if path.isEmpty { return "has an empty name" }
        if path.hasPrefix("/") { return "is an absolute path" }
        if path.contains("\\") { return "contains a backslash" }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "contains a control character"
        }
        for segment in path.split(separator: "/", omittingEmptySubsequences: false) {
            if segment.isEmpty { return "has an empty path segment" }
            if segment == ".." { return "leaves the snapshot directory ('..')" }
            if segment == "." { return "has a '.' path segment" }
            if segment.utf8.count > 255 { return "has a path segment longer than 255 bytes" }
            let bytes = Array(segment.utf8)
            if bytes.count >= 2, bytes[1] == UInt8(ascii: ":"),
                (bytes[0] | 0x20) >= UInt8(ascii: "a"), (bytes[0] | 0x20) <= UInt8(ascii: "z")
            {
                return "starts with a drive letter"
            }
        }
        return nil
    }

    /// A listing in which some file is also used as a folder (`a` and `a/b`): linking `a/b`
    /// would then go through the symlink `a`, into `blobs/`.
    static func fileUsedAsFolder(_ paths: [String]) -> String? {
        let files = Set(paths)
        for path in paths {
            var prefix = Substring(path)
            while let slash = prefix.lastIndex(of: "/") {
                prefix = prefix[..<slash]
                if files.contains(String(prefix)) { return path }
            }
        }
        return nil
    }
}

import Foundation
import PhiFormats
import PhiHub

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One file of the model directory.
struct ModelFile: Sendable {
    /// `/`-separated, relative to the model directory.
    var path: String
    var absolute: String
    /// For a snapshot link into `blobs/`: the blob's name (its sha256 or git sha1).
    var blobName: String?
    /// The file's size; nil for a link that leads nowhere.
    var size: Int?
}

/// The files of a model directory as `verify` sees them: what to hash, which links are
/// broken, and what interrupted jobs left behind.
struct ModelFiles: Sendable {
    var files: [ModelFile]
    /// `*.incomplete` files and `*.incomplete-*` folders inside the directory (paths relative).
    var leftovers: [String]

    var brokenLinks: [ModelFile] { files.filter { $0.size == nil } }

    func file(_ path: String) -> ModelFile? { files.first { $0.path == path } }

    /// A snapshot's files, read the way the cache scan reads them (every file counts: a repo's
    /// dot-files are repo files too).
    static func snapshot(_ snapshot: VerifyTarget.Snapshot, directory: String) -> ModelFiles {
        let entries = snapshot.cache.snapshotFiles(repoID: snapshot.repoID, commit: snapshot.commit)
        var files: [ModelFile] = []
        var leftovers: [String] = []
        for entry in entries {
            if isLeftover(entry.path) {
                leftovers.append(entry.path)
                continue
            }
            files.append(
                ModelFile(
                    path: entry.path, absolute: directory + "/" + entry.path,
                    blobName: entry.blobName, size: entry.size))
        }
        return ModelFiles(files: files, leftovers: leftovers)
    }

    /// Any other directory: its files and subfolders, without hidden ones (`.git`,
    /// `.cache/huggingface`, phikit's manifest), following links to files.
    static func directory(_ directory: String) throws -> ModelFiles {
        var files: [ModelFile] = []
        var leftovers: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: directory) else {
            return ModelFiles(files: [], leftovers: [])
        }
        var seen = 0
        while let relative = walker.nextObject() as? String {
            // A model has tens of files; a home folder with a config.json in it has millions.
            seen += 1
            if seen > maxEntries { throw TooManyFiles(directory: directory, limit: maxEntries) }
            let name = (relative as NSString).lastPathComponent
            let absolute = directory + "/" + relative
            var lst = stat()
            guard lstat(absolute, &lst) == 0 else { continue }
            let isDirectory = lst.st_mode & S_IFMT == S_IFDIR
            if name.hasPrefix(".") {
                if isDirectory { walker.skipDescendants() }
                continue
            }
            if isLeftover(name) {
                leftovers.append(relative)
                if isDirectory { walker.skipDescendants() }
                continue
            }
            if isDirectory { continue }
            var st = stat()
            let exists = stat(absolute, &st) == 0 && st.st_mode & S_IFMT == S_IFREG
            files.append(
                ModelFile(
                    path: relative, absolute: absolute, blobName: nil,
                    size: exists ? Int(st.st_size) : nil))
        }
        files.sort { $0.path < $1.path }
        return ModelFiles(files: files, leftovers: leftovers.sorted())
    }

    static let maxEntries = 100_000

    /// What an interrupted writer leaves: `*.incomplete` (AtomicFile, the safetensors writer,
    /// a blob download) or convert's `<out>.incomplete-XXXXXX` folder.
    static func isLeftover(_ name: String) -> Bool {
        name.hasSuffix(".incomplete") || name.contains(".incomplete-")
    }
}

/// `verify` pointed at a folder far bigger than any model (a home folder, `/`).
struct TooManyFiles: UserFacingError {
    var directory: String
    var limit: Int
    var message: String { "\(directory) holds more than \(limit) files: not a model directory" }
    var hint: String? { "point verify at the folder holding config.json and the weights" }
    var exitCode: ExitCode { .usage }
}

import Foundation
import PhiFormats

/// One file of a local folder to push: where it is, its path in the repo, and the hashes the
/// Hub compares (each computed once, in one read of the file).
public struct UploadFile: Sendable, Equatable {
    /// Path in the repo (`/`-separated, relative).
    public var path: String
    var localPath: String
    public var size: Int
    /// The LFS object id.
    var sha256: String
    /// The git blob id, which the Hub lists for files kept in git.
    var gitBlobSHA1: String
    /// The first 512 bytes, which the Hub's pre-upload check reads to tell text from binary.
    var sample: [UInt8]
}

/// The files of a folder as the Hub will hold them.
enum UploadFolder {
    /// Every regular file below `directory` (links followed to regular files), sorted by
    /// path; hidden files and folders (`.git`, `.cache`, editor files) and phikit's own
    /// records (`*.incomplete`) stay home, as huggingface_hub's `upload_folder` leaves
    /// `.git` and `.cache/huggingface`.
    static func files(
        in directory: String, hashed progress: (String, Int, Int) -> Void
    ) throws(PushError) -> [UploadFile] {
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory),
            isDirectory.boolValue
        else { throw .notADirectory(path: directory) }
        var relative: [String] = []
        guard let walker = FileManager.default.enumerator(atPath: root) else {
            throw .notADirectory(path: directory)
        }
        while let item = walker.nextObject() as? String {
            let name = (item as NSString).lastPathComponent
            if name.hasPrefix(".") || name.hasSuffix(".incomplete") {
                if (walker.fileAttributes?[.type] as? FileAttributeType) == .typeDirectory {
                    walker.skipDescendants()
                }
                continue
            }
            var info = stat()
            guard stat(root + "/" + item, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
                continue
            }
            relative.append(item)
        }
        relative.sort()
        guard !relative.isEmpty else { throw .emptyFolder(path: directory) }
        var files: [UploadFile] = []
        for (index, path) in relative.enumerated() {
            progress(path, index, relative.count)
            files.append(try hash(root + "/" + path, as: path))
        }
        return files
    }

    /// Both hashes and the sample of one file, from a single read.
    static func hash(_ localPath: String, as path: String) throws(PushError) -> UploadFile {
        var info = stat()
        guard stat(localPath, &info) == 0 else {
            throw .local(FileError(path: localPath, operation: "stat", errno: errno))
        }
        let size = Int(info.st_size)
        var sha256 = SHA256Hasher()
        var sha1 = GitBlobSHA1(size: size)
        var sample: [UInt8] = []
        var read = 0
        do {
            try streamFile(localPath) { chunk in
                sha256.update(chunk)
                sha1.update(chunk)
                if sample.count < 512 { sample += chunk.prefix(512 - sample.count) }
                read += chunk.count
            }
        } catch {
            throw .local(FileError(path: localPath, operation: "read", errno: EIO))
        }
        // A file that grew or shrank while it was hashed would be uploaded as other bytes.
        guard read == size else { throw .changedDuringPush(path: localPath) }
        return UploadFile(
            path: path, localPath: localPath, size: size, sha256: sha256.finalizeHex(),
            gitBlobSHA1: sha1.finalizeHex(), sample: sample)
    }
}

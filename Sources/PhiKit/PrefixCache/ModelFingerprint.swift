import Foundation
import PhiEngine
import PhiFormats

/// What a cached KV row depends on besides the tokens: the weights, the architecture and its
/// settings (config.json), the cache width, and the engine that computed it. Two caches with
/// equal fingerprints hold the same bytes for the same tokens; anything that differs gives
/// another fingerprint, so a stored prefix is never restored into a model it does not fit.
///
/// Weight files are identified without reading gigabytes at every start: a file in the Hugging
/// Face cache is a symlink to a blob named by its SHA-256 (checked when it was downloaded), so
/// that name is its content hash; any other file is identified by (device, inode, size,
/// modification time in nanoseconds) plus the SHA-256 of its first MiB (the safetensors
/// header: tensor names, dtypes, shapes, offsets). `convert` writes files atomically (a new
/// inode) and an edit changes the modification time, so a rewritten file never keeps its
/// identity; a copy elsewhere gets a new one and simply misses the cache (never a wrong hit).
/// Hashing every weight byte would cost seconds per GB at each `serve` start.
public struct ModelFingerprint: Sendable, Equatable, CustomStringConvertible {
    /// SHA-256 of everything listed above.
    public let digest: [UInt8]

    public init(digest: [UInt8]) { self.digest = digest }

    /// The fingerprint of the model in `directory` run with a `cacheWidth` cache and
    /// `activationWidth` products by this build (8-bit activations compute other keys).
    public init(
        directory: String, modelType: String, cacheWidth: KVCacheWidth,
        activationWidth: ActivationWidth = .int16, adapterDirectory: String? = nil
    ) throws(FileError) {
        var hasher = SHA256Hasher()
        func add(_ text: String) { hasher.update(Array((text + "\n").utf8)) }
        add("phikit kv prefix v1")
        add("engine \(PhiKitVersion.string) \(BuildInfo.commit) \(BuildInfo.kernelPath)")
        add("architecture \(modelType) kv-bits \(cacheWidth.rawValue)")
        // the 16-bit default adds nothing, so caches written before the option stay valid;
        // "lane blocks": the 8-bit rounding changed (issue 31), and a build without a commit
        // must not restore a cache computed with the old one
        if activationWidth != .int16 { add("act-bits \(activationWidth.rawValue) lane blocks") }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        for name in names.sorted()
        where name == "config.json" || name.hasSuffix(".safetensors") {
            add("file \(name) \(try Self.identity(of: directory + "/" + name))")
        }
        // A run-time adapter changes every cached key and value.
        if let adapter = adapterDirectory {
            for name in ["adapter_config.json", "adapters.safetensors"] {
                add("adapter \(name) \(try Self.identity(of: adapter + "/" + name))")
            }
        }
        digest = hasher.finalize()
    }

    /// The short hex form: the name of the fingerprint's folder in the cache.
    public var description: String {
        digest.prefix(16).map { String(format: "%02x", $0) }.joined()
    }

    /// A file's identity (see the type's comment).
    static func identity(of path: String) throws(FileError) -> String {
        let resolved = (path as NSString).resolvingSymlinksInPath
        let blob = (resolved as NSString).lastPathComponent
        if blob.count == 64, blob.allSatisfy(\.isHexDigit) { return "sha256 " + blob }
        var info = stat()
        guard stat(resolved, &info) == 0 else {
            throw FileError(path: path, operation: "stat", errno: errno)
        }
        let head = try Self.firstBytes(of: resolved, count: 1 << 20)
        return "dev \(info.st_dev) inode \(info.st_ino) size \(info.st_size) "
            + "mtime \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) head "
            + SHA256Hasher.hex(of: head)
    }

    private static func firstBytes(of path: String, count: Int) throws(FileError) -> [UInt8] {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw FileError(path: path, operation: "open", errno: errno)
        }
        defer { try? handle.close() }
        do {
            return [UInt8](try handle.read(upToCount: count) ?? Data())
        } catch {
            throw FileError(path: path, operation: "read", errno: EIO)
        }
    }
}

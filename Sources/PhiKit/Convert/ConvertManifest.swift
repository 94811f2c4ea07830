import Foundation
import PhiFormats

/// `.phikit-manifest.json`: what `convert` made and from what — the source, the settings, and
/// the size and SHA-256 of every file it wrote — so that `phikit verify` can prove a converted
/// model is still the bytes convert wrote (a converted model has no Hub listing to check).
///
///     {"format_version": 1, "tool": "phikit 0.1.0",
///      "source": {"model": "phi-3.5-mini-hf", "directory": "…", "repo": "…",
///                 "revision": "main"},
///      "settings": {"quantize": true, "bits": 4, "group_size": 64, "dtype": null, …},
///      "files": {"config.json": {"size": 4327, "sha256": "…"}, "model.safetensors": {…}}}
///
/// A hidden file, so nothing else notices it: mlx_lm.load globs `model*.safetensors` and reads
/// config.json and the tokenizer files by name, transformers and huggingface_hub look only for
/// the files they know. It is written last, after every file it lists, inside the temporary
/// output directory, so it is installed by the same rename as the model.
public struct ConvertManifest: Sendable, Equatable {
    public static let fileName = ".phikit-manifest.json"
    public static let formatVersion = 1

    public struct File: Sendable, Equatable {
        public var size: Int
        public var sha256: String
    }

    public struct Source: Sendable, Equatable {
        /// SOURCE as given to convert.
        public var model: String
        public var directory: String
        public var repo: String?
        public var revision: String?
    }

    /// phikit's version.
    public var tool: String
    public var source: Source
    /// The options that decide the output's bytes (`quantize`, `bits`, `group_size`, `dtype`,
    /// `dequantize`, `max_shard_size`), as JSON.
    public var settings: JSONValue
    /// Output file name → size and SHA-256.
    public var files: [String: File]

    /// Hashes every file of `directory` (on `threads` threads; the weights were just written,
    /// so they are read from the page cache) and writes the manifest beside them, atomically.
    static func write(
        into directory: String, source: LocalModel, options: ConvertOptions, threads: Int
    ) throws {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [])
            .filter { !$0.hasPrefix(".") }.sorted()
        let items = names.map { name in
            let path = directory + "/" + name
            let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size]
            return ScanItem(
                path: path, sha256: true, gitSHA1: false, tensors: nil,
                size: (size as? NSNumber)?.intValue ?? 0)
        }
        let scan = try FileScan.run(items, threads: threads)
        if let (path, reason) = scan.failures.first {
            throw ConvertError.io(path: path, detail: "cannot hash the output: \(reason)")
        }
        var files: [String: File] = [:]
        for name in names {
            guard let digest = scan.digests[directory + "/" + name], let sha = digest.sha256
            else { continue }
            files[name] = File(size: digest.size, sha256: sha)
        }
        let manifest = ConvertManifest(
            tool: "phikit \(PhiKitVersion.string)",
            source: Source(
                model: options.source, directory: source.directory, repo: source.hubRepo,
                revision: source.revision),
            settings: .object(settings(options)),
            files: files)
        let path = directory + "/" + fileName
        do {
            try AtomicFile.write(Array(manifest.json().pythonJSONDump(indent: 2).utf8), to: path)
        } catch {
            throw ConvertError.io(path: path, detail: error.message)
        }
    }

    /// The options that decide the bytes (a mode and a recipe only when they are used, so an
    /// affine manifest reads as before).
    private static func settings(_ o: ConvertOptions) -> [(key: String, value: JSONValue)] {
        let scheme = o.quantize ? try? o.quantizationScheme() : nil
        var out: [(key: String, value: JSONValue)] = [
            ("quantize", .bool(o.quantize)),
            ("bits", scheme.map { .int($0.bits) } ?? .null),
            ("group_size", scheme.map { .int($0.groupSize) } ?? .null),
        ]
        if let scheme, scheme.mode != "affine" { out.append(("mode", .string(scheme.mode))) }
        if let r = o.quantPredicate { out.append(("quant_predicate", .string(r.rawValue))) }
        out += [
            ("dtype", o.dtype.map { .string($0.pythonName) } ?? .null),
            ("dequantize", .bool(o.dequantize)),
            ("max_shard_size", .int(o.maxShardSize)),
        ]
        return out
    }

    func json() -> JSONValue {
        func optional(_ s: String?) -> JSONValue { s.map { .string($0) } ?? .null }
        let fileMembers = files.keys.sorted().map { name -> (key: String, value: JSONValue) in
            let f = files[name]!
            return (name, .object([("size", .int(f.size)), ("sha256", .string(f.sha256))]))
        }
        return .object([
            ("format_version", .int(Self.formatVersion)),
            ("tool", .string(tool)),
            (
                "source",
                .object([
                    ("model", .string(source.model)), ("directory", .string(source.directory)),
                    ("repo", optional(source.repo)), ("revision", optional(source.revision)),
                ])
            ),
            ("settings", settings),
            ("files", .object(fileMembers)),
        ])
    }

    /// The manifest of a converted model directory; nil when it has none.
    public static func read(directory: String) throws(ConfigError) -> ConvertManifest? {
        let path = (directory as NSString).appendingPathComponent(fileName)
        var exists = stat()
        guard lstat(path, &exists) == 0 else { return nil }
        let data = try readMetadataFile(path)
        let root: JSONValue
        do {
            root = try JSONValue(parsing: data)
        } catch {
            throw .invalidJSON(path: path, detail: error.message)
        }
        guard root["format_version"]?.intValue == formatVersion else {
            throw .invalidValue(
                path: path, field: "format_version", detail: "must be \(formatVersion)")
        }
        guard let members = root["files"]?.objectValue else {
            throw .missingField(path: path, field: "files")
        }
        var files: [String: File] = [:]
        for (name, value) in members {
            guard let size = value["size"]?.intValue, size >= 0,
                let sha = value["sha256"]?.stringValue, sha.utf8.count == 64
            else {
                throw .invalidValue(
                    path: path, field: "files.\(name)", detail: "needs a size and a sha256")
            }
            guard isPlainFileName(name) else {
                throw .invalidValue(
                    path: path, field: "files.\(name)",
                    detail: "is not a file name inside the model directory")
            }
            files[name] = File(size: size, sha256: sha)
        }
        let source = root["source"]
        return ConvertManifest(
            tool: root["tool"]?.stringValue ?? "",
            source: Source(
                model: source?["model"]?.stringValue ?? "",
                directory: source?["directory"]?.stringValue ?? "",
                repo: source?["repo"]?.stringValue, revision: source?["revision"]?.stringValue),
            settings: root["settings"] ?? .null, files: files)
    }
}

/// A name of a file directly inside the directory (manifests list no folders).
private func isPlainFileName(_ name: String) -> Bool {
    !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\0")
}

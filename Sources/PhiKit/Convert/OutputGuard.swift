import Foundation
import PhiFormats

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What `convert` may overwrite. `--force` replaces an earlier model output and nothing else:
/// pointed at the source model, the current directory or a project folder, it deleted them.
///
/// Whatever the flags, the output may not be the source, contain it (or the blobs an HF cache
/// snapshot links to) or lie inside it. An existing output is replaced (with `--force`) only
/// when it is recognisably a model: convert's manifest, or config.json plus weights and no
/// file a model folder would not hold.
enum OutputGuard {
    static func check(output: String, source: LocalModel, force: Bool) throws {
        let out = realPath(output)
        for protected in sourcePaths(source) {
            if out == protected || isInside(protected, out) {
                throw ConvertError.outputIsSource(
                    path: output,
                    detail: "replacing it would delete the source model \(source.directory)")
            }
            if isInside(out, protected) {
                throw ConvertError.outputIsSource(
                    path: output, detail: "it lies inside the source model \(source.directory)")
            }
        }
        var st = stat()
        guard lstat(output, &st) == 0 else { return }
        guard force else { throw ConvertError.outputExists(path: output) }
        if let foreign = foreignEntry(in: out) {
            throw ConvertError.outputNotAModel(path: output, foreign: foreign)
        }
    }

    /// The source directory and, for links (an HF cache snapshot), every file they lead to.
    private static func sourcePaths(_ source: LocalModel) -> [String] {
        var paths = [realPath(source.directory)]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: source.directory)) ?? []
        for name in names {
            let file = realPath(source.directory + "/" + name)
            if !isInside(file, paths[0]) { paths.append(file) }
        }
        return paths
    }

    /// The first reason `directory` is not a replaceable model output (nil when it is one):
    /// something that is not a directory, a sub-folder, or a file of a kind no model has.
    static func foreignEntry(in directory: String) -> String? {
        var st = stat()
        guard stat(directory, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else {
            return "\(directory) is not a directory"
        }
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return "\(directory) cannot be listed"
        }
        if names.contains(ConvertManifest.fileName) {
            return names.first { !isOurs($0, in: directory) }.map { directory + "/" + $0 }
        }
        if !names.contains("config.json") { return "\(directory) has no config.json" }
        if !names.contains(where: { $0.hasSuffix(".safetensors") }) {
            return "\(directory) has no weights (*.safetensors)"
        }
        return names.first { !isModelFile($0, in: directory) }.map { directory + "/" + $0 }
    }

    /// A regular file with a name a converted or downloaded model folder holds.
    private static func isModelFile(_ name: String, in directory: String) -> Bool {
        var st = stat()
        guard lstat(directory + "/" + name, &st) == 0, st.st_mode & S_IFMT == S_IFREG else {
            return false
        }
        let known = [
            ".json", ".safetensors", ".jinja", ".model", ".txt", ".md", ".py", ".tiktoken",
            ".gitattributes", "LICENSE", "NOTICE", ".incomplete",
        ]
        return known.contains { name.hasSuffix($0) }
    }

    /// Files convert writes, plus anything a model folder holds (a manifest folder may have
    /// gained a LICENSE); still no sub-folder.
    private static func isOurs(_ name: String, in directory: String) -> Bool {
        name == ConvertManifest.fileName || isModelFile(name, in: directory)
    }

    /// `path` with every symbolic link resolved; a path that does not exist yet keeps its
    /// missing tail under its deepest existing ancestor's real path.
    static func realPath(_ path: String) -> String {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        var head = absolute
        var tail: [String] = []
        while true {
            if let resolved = realpath(head, nil) {
                defer { free(resolved) }
                let base = String(cString: resolved)
                if tail.isEmpty { return base }
                return (base == "/" ? "" : base) + "/" + tail.reversed().joined(separator: "/")
            }
            guard head != "/" && !head.isEmpty else { return absolute }
            tail.append((head as NSString).lastPathComponent)
            head = (head as NSString).deletingLastPathComponent
        }
    }

    /// True when `path` is strictly below `directory`.
    static func isInside(_ path: String, _ directory: String) -> Bool {
        directory == "/" ? path != "/" : path.hasPrefix(directory + "/")
    }
}

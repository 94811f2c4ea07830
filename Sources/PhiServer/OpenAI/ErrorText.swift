import Foundation
import PhiFormats
import PhiKit

/// A library error as a client reads it. The libraries name files by their absolute paths
/// (`/home/me/.cache/huggingface/hub/models--…/snapshots/<sha>/tokenizer_config.json`), which
/// is right on the terminal of the person who ran the command and wrong in the answer of a
/// server: a client learns the model, never the server's disk. Paths inside the model's
/// directory become `<model>/<file>`; any other absolute path is cut to its file name.
struct ErrorText: Sendable {
    /// The model directory as given and as resolved (a Hub snapshot is a tree of symlinks),
    /// each with the text that replaces it.
    private let prefixes: [(path: String, name: String)]

    init(modelDirectory: String, modelID: String) {
        var directories = [modelDirectory]
        let resolved = URL(fileURLWithPath: modelDirectory).resolvingSymlinksInPath().path
        if resolved != modelDirectory { directories.append(resolved) }
        // Longest first, so a resolved path inside the given one is replaced whole.
        prefixes = directories.sorted { $0.count > $1.count }.map {
            (path: $0.hasSuffix("/") ? String($0.dropLast()) : $0, name: modelID)
        }
    }

    /// The message of `error` (its one-line `message` when it has one) without local paths.
    func message(of error: any Error) -> String {
        redact((error as? any UserFacingError)?.message ?? "\(error)")
    }

    func redact(_ text: String) -> String {
        var text = text
        for prefix in prefixes where !prefix.path.isEmpty {
            text = text.replacingOccurrences(of: prefix.path, with: prefix.name)
        }
        return Self.cutAbsolutePaths(text)
    }

    /// `/a/b/c.json` → `c.json`: every run of at least two `/`-separated components that
    /// starts at a word boundary.
    static func cutAbsolutePaths(_ text: String) -> String {
        let scalars = Array(text.unicodeScalars)
        var out = String.UnicodeScalarView()
        var i = 0
        func isPathScalar(_ c: Unicode.Scalar) -> Bool {
            !(c.properties.isWhitespace || "'\"`,;:()[]{}<>".unicodeScalars.contains(c))
        }
        while i < scalars.count {
            let atBoundary = i == 0 || !isPathScalar(scalars[i - 1])
            guard atBoundary, scalars[i] == "/" else {
                out.append(scalars[i])
                i += 1
                continue
            }
            var end = i
            while end < scalars.count, isPathScalar(scalars[end]) { end += 1 }
            let path = scalars[i..<end]
            let slashes = path.filter { $0 == "/" }.count
            if slashes >= 2, let last = path.lastIndex(of: "/"), last + 1 < end {
                out.append(contentsOf: scalars[(last + 1)..<end])
            } else {
                out.append(contentsOf: path)
            }
            i = end
        }
        return String(out)
    }
}

/// Which files of a repo to download: `--include` and `--exclude` globs, matched the way
/// huggingface_hub's `filter_repo_objects` matches them (Python's `fnmatchcase`: `*` matches
/// any run of characters, `/` included; `?` one character; `[abc]`, `[a-z]`, `[!abc]`), with
/// a pattern ending in `/` meaning everything under that folder.
public struct FilePatterns: Sendable, Equatable {
    /// nil: every file. Otherwise a file must match one of these.
    public var include: [String]?
    public var exclude: [String]

    public init(include: [String]? = nil, exclude: [String] = []) {
        self.include = include.map { $0.map(Self.normalize) }
        self.exclude = exclude.map(Self.normalize)
    }

    /// What mlx-lm downloads for a model (`mlx_lm.utils`): config and tokenizer JSON, the
    /// weights, code, tokenizer models and chat templates — not READMEs, images or other
    /// weight formats.
    public static let mlxDefaults = FilePatterns(include: [
        "*.json", "model*.safetensors", "*.py", "tokenizer.model", "*.tiktoken",
        "tiktoken.model", "*.txt", "*.jsonl", "*.jinja",
    ])

    public func matches(_ path: String) -> Bool {
        if let include, !include.contains(where: { Self.fnmatch(path, $0) }) { return false }
        return !exclude.contains { Self.fnmatch(path, $0) }
    }

    private static func normalize(_ pattern: String) -> String {
        pattern.hasSuffix("/") ? pattern + "*" : pattern
    }

    /// Python's `fnmatch.fnmatchcase`, iteratively: on a mismatch after a `*`, retry with
    /// the star consuming one more character.
    static func fnmatch(_ name: String, _ pattern: String) -> Bool {
        let text = Array(name.unicodeScalars)
        let pat = Array(pattern.unicodeScalars)
        var t = 0
        var p = 0
        var starP = -1
        var starT = 0
        while t < text.count {
            if p < pat.count, pat[p] == "*" {
                starP = p
                starT = t
                p += 1
                continue
            }
            if p < pat.count, let next = matchOne(text[t], pat, at: p) {
                t += 1
                p = next
                continue
            }
            guard starP >= 0 else { return false }
            starT += 1
            t = starT
            p = starP + 1
        }
        while p < pat.count, pat[p] == "*" { p += 1 }
        return p == pat.count
    }

    /// If `c` matches the pattern element at `p` (`?`, a bracket set, or a literal), the index
    /// after that element.
    private static func matchOne(
        _ c: Unicode.Scalar, _ pat: [Unicode.Scalar], at p: Int
    ) -> Int? {
        switch pat[p] {
        case "?": return p + 1
        case "[":
            // A `[` with no closing `]` is a literal, as in Python.
            guard let (end, matched) = bracket(c, pat, at: p) else { return c == "[" ? p + 1 : nil }
            return matched ? end + 1 : nil
        default: return c == pat[p] ? p + 1 : nil
        }
    }

    /// The set `[...]` starting at `p`: the index of its closing `]` and whether `c` is in
    /// it; nil when the bracket is never closed.
    private static func bracket(
        _ c: Unicode.Scalar, _ pat: [Unicode.Scalar], at p: Int
    ) -> (end: Int, matched: Bool)? {
        var i = p + 1
        let negate = i < pat.count && pat[i] == "!"
        if negate { i += 1 }
        var found = false
        var first = true
        while i < pat.count, pat[i] != "]" || first {
            first = false
            if i + 2 < pat.count, pat[i + 1] == "-", pat[i + 2] != "]" {
                if pat[i] <= c && c <= pat[i + 2] { found = true }
                i += 3
            } else {
                if pat[i] == c { found = true }
                i += 1
            }
        }
        guard i < pat.count else { return nil }
        return (i, found != negate)
    }
}

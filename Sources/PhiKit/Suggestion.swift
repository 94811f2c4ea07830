/// "did you mean …?" for a mistyped flag, command or model name: the known name closest by
/// edit distance, when it is close enough to be a plausible typo. Case and leading dashes are
/// ignored.
public enum Suggestion {
    public static func nearest(to typed: String, in candidates: some Sequence<String>) -> String? {
        let bare = strip(typed)
        guard !bare.isEmpty else { return nil }
        var best: (name: String, distance: Int)?
        for candidate in candidates {
            let other = strip(candidate)
            // A unique-looking prefix (`--group` for `--group-size`) is as good as one typo.
            let distance =
                other.starts(with: bare) && bare.count >= 3 ? 1 : editDistance(bare, other)
            if distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        guard let best else { return nil }
        // One typo per three characters, at least one and at most three.
        let allowed = min(3, max(1, bare.count / 3))
        return best.distance <= allowed ? best.name : nil
    }

    private static func strip(_ name: String) -> [Character] {
        Array(name.drop { $0 == "-" }.lowercased())
    }

    /// Levenshtein distance, with an adjacent swap counting as one edit (`--jsno`).
    public static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // d[i][j]: edits turning a[..<i] into b[..<j]; three rows are enough for swaps.
        var before = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let substitution = previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)
                current[j] = min(previous[j] + 1, current[j - 1] + 1, substitution)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], before[j - 2] + 1)
                }
            }
            (before, previous, current) = (previous, current, before)
        }
        return previous[b.count]
    }
}

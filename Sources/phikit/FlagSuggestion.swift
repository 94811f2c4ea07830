import PhiKit

/// The hint for an unknown option. Long ones (`--group-sise`, `-temp`) go to the nearest known
/// name by edit distance; a one-letter flag has no letters to compare, so it gets the flag of
/// the other case (`-P` → `-p`), the option other tools spell with that letter (llama.cpp's
/// `-t`, `-c`, `-s`), or the only long option starting with it, and otherwise nothing rather
/// than an arbitrary one-letter neighbour.
enum FlagSuggestion {
    /// One-letter flags of llama.cpp and mlx-lm, and what phikit calls them.
    static let otherTools: [String: [String]] = [
        "-t": ["--threads"], "-c": ["--max-kv-size"], "-s": ["--seed"],
        "-n": ["--max-tokens"], "-f": ["--file"], "-v": ["--version"],
        "-k": ["--top-k"], "-o": ["--out", "--output"],
    ]

    static func hint(for typed: String, known: some Collection<String>) -> String? {
        nearest(to: typed, in: known).map { "did you mean '\($0)'?" }
    }

    static func nearest(to typed: String, in known: some Collection<String>) -> String? {
        let isShort = typed.count == 2 && typed.hasPrefix("-") && typed != "--"
        guard isShort else { return Suggestion.nearest(to: typed, in: known) }
        if let otherCase = known.first(where: {
            $0 != typed && $0.lowercased() == typed.lowercased()
        }) {
            return otherCase
        }
        if let spelled = otherTools[typed]?.first(where: known.contains) { return spelled }
        let letter = typed.dropFirst()
        let starting = known.filter { $0.hasPrefix("--") && $0.dropFirst(2).hasPrefix(letter) }
        return starting.count == 1 ? starting.first : nil
    }
}

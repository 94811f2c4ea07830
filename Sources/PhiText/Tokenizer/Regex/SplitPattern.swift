/// What a `Split` pre-tokenizer or a `Replace` normalizer/decoder looks for: a literal string,
/// or a regular expression (a hand-written matcher when the pattern is a known one, else the
/// backtracking matcher).
enum SplitPattern: Sendable {
    case literal([UInt8])
    case known(KnownSplitPattern)
    case regex(BacktrackingMatcher)

    /// From tokenizer.json's `{"String": …}` / `{"Regex": …}`.
    static func regex(_ source: String) throws(RegexParser.Unsupported) -> SplitPattern {
        if let known = KnownSplitPattern(source: source) { return .known(known) }
        return .regex(BacktrackingMatcher(root: try RegexParser.parse(source)))
    }

    /// The non-overlapping matches in `bytes`, leftmost first, as byte ranges — what
    /// Oniguruma's `find_iter` gives (an empty match right after the previous match is skipped;
    /// after an empty match the search moves on one scalar).
    func matches(in bytes: UnsafeBufferPointer<UInt8>, scratch: inout ScalarText) -> [Range<Int>] {
        switch self {
        case .literal(let needle): return Self.literalMatches(needle, in: bytes)
        case .known(let known): return regexMatches(bytes, &scratch) { known.match($0, at: $1) }
        case .regex(let matcher):
            let budget = RegexBudget(length: bytes.count)
            let found = regexMatches(bytes, &scratch) { matcher.match($0, at: $1, budget: budget) }
            if budget.exhausted { scratch.regexBudgetExceeded = true }
            return found
        }
    }

    private func regexMatches(
        _ bytes: UnsafeBufferPointer<UInt8>, _ text: inout ScalarText,
        _ matchAt: (ScalarText, Int) -> Int?
    ) -> [Range<Int>] {
        text.load(bytes)
        var found: [Range<Int>] = []
        var position = 0
        var lastEnd = -1
        while position <= text.count {
            guard let end = matchAt(text, position) else {
                position += 1
                continue
            }
            if end == position {
                if position != lastEnd {
                    found.append(text.offsets[position]..<text.offsets[position])
                }
                lastEnd = end
                position += 1
            } else {
                found.append(text.offsets[position]..<text.offsets[end])
                lastEnd = end
                position = end
            }
        }
        return found
    }

    /// Leftmost non-overlapping occurrences; an empty needle matches nothing.
    static func literalMatches(
        _ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>
    ) -> [Range<Int>] {
        guard !needle.isEmpty, needle.count <= bytes.count else { return [] }
        var found: [Range<Int>] = []
        let first = needle[0]
        var i = 0
        let last = bytes.count - needle.count
        while i <= last {
            if bytes[i] == first {
                var j = 1
                while j < needle.count && bytes[i + j] == needle[j] { j += 1 }
                if j == needle.count {
                    found.append(i..<(i + needle.count))
                    i += needle.count
                    continue
                }
            }
            i += 1
        }
        return found
    }
}

/// How a split treats the matched delimiters (tokenizers' `SplitDelimiterBehavior`).
enum SplitBehavior: String, Sendable {
    case removed = "Removed"
    case isolated = "Isolated"
    case mergedWithPrevious = "MergedWithPrevious"
    case mergedWithNext = "MergedWithNext"
    case contiguous = "Contiguous"

    /// Cuts `0..<length` at `matches` into the pieces this behaviour keeps (empty ones
    /// dropped), with `invert` swapping what counts as a match.
    func pieces(length: Int, matches: [Range<Int>], invert: Bool) -> [Range<Int>] {
        // (range, isMatch) covering the whole text, as tokenizers' Pattern::find_matches.
        var segments: [(Range<Int>, Bool)] = []
        segments.reserveCapacity(matches.count * 2 + 1)
        var previous = 0
        for m in matches {
            if previous != m.lowerBound { segments.append((previous..<m.lowerBound, invert)) }
            segments.append((m, !invert))
            previous = m.upperBound
        }
        if previous != length || length == 0 { segments.append((previous..<length, invert)) }

        var kept: [Range<Int>] = []
        kept.reserveCapacity(segments.count)
        var previousMatch = false
        switch self {
        case .isolated:
            kept = segments.map(\.0)
        case .removed:
            kept = segments.filter { !$0.1 }.map(\.0)
        case .contiguous:
            for (range, isMatch) in segments {
                if isMatch == previousMatch, let last = kept.last {
                    kept[kept.count - 1] = last.lowerBound..<range.upperBound
                } else {
                    kept.append(range)
                }
                previousMatch = isMatch
            }
        case .mergedWithPrevious:
            for (range, isMatch) in segments {
                if isMatch && !previousMatch, let last = kept.last {
                    kept[kept.count - 1] = last.lowerBound..<range.upperBound
                } else {
                    kept.append(range)
                }
                previousMatch = isMatch
            }
        case .mergedWithNext:
            for (range, isMatch) in segments.reversed() {
                if isMatch && !previousMatch, let last = kept.last {
                    kept[kept.count - 1] = range.lowerBound..<last.upperBound
                } else {
                    kept.append(range)
                }
                previousMatch = isMatch
            }
            kept.reverse()
        }
        return kept.filter { !$0.isEmpty }
    }
}

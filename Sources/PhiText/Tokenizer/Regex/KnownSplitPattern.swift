/// Hand-written matchers for the split patterns of the GPT-4o (o200k), GPT-4 (cl100k) and
/// GPT-2 tokenizers. Each returns exactly what Oniguruma's backtracking search returns for its
/// pattern at a given start (alternatives in order, greedy runs, backing off where the
/// pattern would), in one forward pass with no recursion. `KnownSplitPatternTests` checks
/// them against `BacktrackingMatcher` on the test corpus.
enum KnownSplitPattern: Sendable {
    case o200k
    case cl100k
    case gpt2

    static let o200kSource =
        #"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"#
    static let cl100kSource =
        #"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"#
    static let gpt2Source =
        #"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"#

    init?(source: String) {
        switch source {
        case Self.o200kSource: self = .o200k
        case Self.cl100kSource: self = .cl100k
        case Self.gpt2Source: self = .gpt2
        default: return nil
        }
    }

    func match(_ text: ScalarText, at start: Int) -> Int? {
        text.scalars.withUnsafeBufferPointer { s in
            text.packed.withUnsafeBufferPointer { p in
                let t = Classes(s: s, p: p)
                switch self {
                case .o200k: return t.o200k(start)
                case .cl100k: return t.cl100k(start)
                case .gpt2: return t.gpt2(start)
                }
            }
        }
    }

    private struct Classes {
        let s: UnsafeBufferPointer<UInt32>
        let p: UnsafeBufferPointer<UInt8>
        var n: Int { s.count }

        @inline(__always) func cat(_ i: Int) -> UInt8 { p[i] & 0x1F }
        @inline(__always) func isLetter(_ i: Int) -> Bool { i < n && cat(i) <= 4 }
        @inline(__always) func isNumber(_ i: Int) -> Bool { i < n && (8...10).contains(cat(i)) }
        @inline(__always) func isSpace(_ i: Int) -> Bool { i < n && scalarIsWhitespace(p[i]) }
        @inline(__always) func isNewline(_ i: Int) -> Bool {
            i < n && (s[i] == 0x0A || s[i] == 0x0D)
        }
        /// `[^\r\n\p{L}\p{N}]`
        @inline(__always) func isPrefix(_ i: Int) -> Bool {
            i < n && !isNewline(i) && !isLetter(i) && !isNumber(i)
        }
        /// `[^\s\p{L}\p{N}]`
        @inline(__always) func isOther(_ i: Int) -> Bool {
            i < n && !isSpace(i) && !isLetter(i) && !isNumber(i)
        }
        /// `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
        @inline(__always) func isUpperish(_ i: Int) -> Bool {
            guard i < n else { return false }
            let c = cat(i)
            return c == 0 || (c >= 2 && c <= 7)
        }
        /// `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
        @inline(__always) func isLowerish(_ i: Int) -> Bool {
            guard i < n else { return false }
            let c = cat(i)
            return c == 1 || (c >= 3 && c <= 7)
        }

        /// Length of `'s|'t|'re|'ve|'m|'ll|'d` at `i`, case-insensitive or not; 0 if none.
        func contraction(_ i: Int, ignoreCase: Bool) -> Int {
            guard i + 1 < n, s[i] == 0x27 else { return 0 }
            func fold(_ v: UInt32) -> UInt32 {
                guard ignoreCase else { return v }
                if v == 0x17F { return 0x73 }  // ſ folds to s
                return (0x41...0x5A).contains(v) ? v + 0x20 : v
            }
            switch fold(s[i + 1]) {
            case 0x73, 0x74, 0x6D, 0x64: return 2  // s t m d
            case 0x72, 0x76:  // r v, then e
                return i + 2 < n && fold(s[i + 2]) == 0x65 ? 3 : 0
            case 0x6C:  // l, then l
                return i + 2 < n && fold(s[i + 2]) == 0x6C ? 3 : 0
            default: return 0
            }
        }

        /// End of the maximal `\s` run from `i`.
        func spaceRun(_ i: Int) -> Int {
            var e = i
            while isSpace(e) { e += 1 }
            return e
        }

        /// `\s*[\r\n]+|\s+(?!\S)|\s+` at `i`.
        func whitespace(_ i: Int) -> Int? {
            let w = spaceRun(i)
            guard w > i else { return nil }
            var k = w - 1
            while k >= i {
                if isNewline(k) { return k + 1 }
                k -= 1
            }
            if w == n || w - i < 2 { return w }
            return w - 1
        }

        func numbers(_ i: Int, max: Int) -> Int? {
            var e = i
            while e - i < max, isNumber(e) { e += 1 }
            return e > i ? e : nil
        }

        func o200k(_ i: Int) -> Int? {
            // [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]*[Ll Lm Lo M]+(?i:contraction)?
            func lowerFirst(_ j: Int) -> Int? {
                var u = j
                while isUpperish(u) { u += 1 }
                var k = u
                while k >= j {
                    if isLowerish(k) {
                        var e = k
                        while isLowerish(e) { e += 1 }
                        return e + contraction(e, ignoreCase: true)
                    }
                    k -= 1
                }
                return nil
            }
            // [^\r\n\p{L}\p{N}]?[Lu Lt Lm Lo M]+[Ll Lm Lo M]*(?i:contraction)?
            func upperFirst(_ j: Int) -> Int? {
                guard isUpperish(j) else { return nil }
                var e = j
                while isUpperish(e) { e += 1 }
                while isLowerish(e) { e += 1 }
                return e + contraction(e, ignoreCase: true)
            }
            let prefixed = isPrefix(i)
            if prefixed, let e = lowerFirst(i + 1) { return e }
            if let e = lowerFirst(i) { return e }
            if prefixed, let e = upperFirst(i + 1) { return e }
            if let e = upperFirst(i) { return e }
            if let e = numbers(i, max: 3) { return e }
            if let e = punctuation(i, trailing: [0x0A, 0x0D, 0x2F]) { return e }
            return whitespace(i)
        }

        func cl100k(_ i: Int) -> Int? {
            let c = contraction(i, ignoreCase: true)
            if c > 0 { return i + c }
            // [^\r\n\p{L}\p{N}]?\p{L}+
            let j = isPrefix(i) && isLetter(i + 1) ? i + 1 : i
            if isLetter(j) {
                var e = j
                while isLetter(e) { e += 1 }
                return e
            }
            if let e = numbers(i, max: 3) { return e }
            if let e = punctuation(i, trailing: [0x0A, 0x0D]) { return e }
            return whitespace(i)
        }

        func gpt2(_ i: Int) -> Int? {
            let c = contraction(i, ignoreCase: false)
            if c > 0 { return i + c }
            let j = i < n && s[i] == 0x20 ? i + 1 : i
            if isLetter(j) {
                var e = j
                while isLetter(e) { e += 1 }
                return e
            }
            if isNumber(j) {
                var e = j
                while isNumber(e) { e += 1 }
                return e
            }
            if isOther(j) {
                var e = j
                while isOther(e) { e += 1 }
                return e
            }
            // \s+(?!\S)|\s+
            let w = spaceRun(i)
            guard w > i else { return nil }
            return w == n || w - i < 2 ? w : w - 1
        }

        /// ` ?[^\s\p{L}\p{N}]+[trailing]*`
        func punctuation(_ i: Int, trailing: [UInt32]) -> Int? {
            let j = i < n && s[i] == 0x20 ? i + 1 : i
            guard isOther(j) else { return nil }
            var e = j
            while isOther(e) { e += 1 }
            while e < n, trailing.contains(s[e]) { e += 1 }
            return e
        }
    }
}

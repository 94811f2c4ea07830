/// tokenizer.json's `pre_tokenizer`: cuts normalized text into words before BPE.
indirect enum PreTokenizer: Sendable {
    enum PrependScheme: String, Sendable { case first, always, never }

    case sequence([PreTokenizer])
    case split(SplitPattern, SplitBehavior, invert: Bool)
    /// GPT-2 style. The byte-to-alphabet rewrite itself is not done here: the model works on
    /// raw bytes (see `BPEModel.byteLevel`), so this only adds the prefix space and splits.
    case byteLevel(addPrefixSpace: Bool, useRegex: Bool)
    case metaspace(replacement: [UInt8], scheme: PrependScheme, split: Bool)
    case digits(individual: Bool)
    /// `\w+|[^\w\s]+`
    case whitespace
    case whitespaceSplit
    case punctuation(SplitBehavior)

    static let gpt2Split = SplitPattern.known(.gpt2)
    /// The Whitespace pre-tokenizer's pattern (compiled by tokenizers with Rust's regex).
    static let wordsOrSymbols = SplitPattern.regex(
        BacktrackingMatcher(root: try! RegexParser.parse(#"\w+|[^\w\s]+"#, rustWord: true)))

    init(_ r: ComponentReader) throws(TokenizerBuildError) {
        switch try r.type() {
        case "Sequence":
            let steps = try r.array("pretokenizers").map(PreTokenizer.init)
            if let i = steps.dropLast().firstIndex(where: \.isByteLevel) {
                throw .unsupported(
                    r.path + ".pretokenizers[\(i)]", "pre-tokenizer order: ByteLevel must come last"
                )
            }
            self = .sequence(steps)
        case "Split":
            self = .split(
                try r.pattern("pattern"), try Self.behavior(r, "behavior", default: nil),
                invert: try r.bool("invert", default: false))
        case "ByteLevel":
            self = .byteLevel(
                addPrefixSpace: try r.bool("add_prefix_space", default: true),
                useRegex: try r.bool("use_regex", default: true))
        case "Metaspace":
            var scheme = PrependScheme.always
            if let name = try r.optionalString("prepend_scheme") {
                guard let s = PrependScheme(rawValue: name) else {
                    throw .invalid(r.path + ".prepend_scheme", "unknown scheme '\(name)'")
                }
                scheme = s
            }
            if try r.bool("add_prefix_space", default: true) == false { scheme = .never }
            self = .metaspace(
                replacement: Array(try r.character("replacement").utf8), scheme: scheme,
                split: try r.bool("split", default: true))
        case "Digits": self = .digits(individual: try r.bool("individual_digits", default: false))
        case "Whitespace": self = .whitespace
        case "WhitespaceSplit": self = .whitespaceSplit
        case "Punctuation":
            self = .punctuation(try Self.behavior(r, "behavior", default: .isolated))
        default: try r.unsupported("pre-tokenizer")
        }
    }

    private static func behavior(
        _ r: ComponentReader, _ key: String, default fallback: SplitBehavior?
    ) throws(TokenizerBuildError) -> SplitBehavior {
        guard let name = try r.optionalString(key) else {
            guard let fallback else { throw .invalid(r.path + "." + key, "missing") }
            return fallback
        }
        guard let b = SplitBehavior(rawValue: name) else {
            throw .invalid(r.path + "." + key, "unknown split behavior '\(name)'")
        }
        return b
    }

    /// Whether this (or the last step of a sequence) is ByteLevel: the model then runs in
    /// byte-level mode.
    var isByteLevel: Bool {
        switch self {
        case .byteLevel: true
        case .sequence(let steps): steps.last?.isByteLevel ?? false
        default: false
        }
    }

    func apply(to pieces: inout Pieces, scratch: inout ScalarText) {
        switch self {
        case .sequence(let steps):
            for step in steps { step.apply(to: &pieces, scratch: &scratch) }
        case .split(let pattern, let behavior, let invert):
            pieces.split { bytes in
                behavior.pieces(
                    length: bytes.count, matches: pattern.matches(in: bytes, scratch: &scratch),
                    invert: invert)
            }
        case .byteLevel(let addPrefixSpace, let useRegex):
            if addPrefixSpace {
                for i in pieces.ranges.indices where pieces.bytes(i).first != 0x20 {
                    pieces.rewrite(i, [0x20] + pieces.bytes(i))
                }
            }
            if useRegex {
                PreTokenizer.split(Self.gpt2Split, .isolated, invert: false)
                    .apply(to: &pieces, scratch: &scratch)
            }
        case .metaspace(let replacement, let scheme, let split):
            applyMetaspace(&pieces, replacement, scheme, split)
        case .digits(let individual):
            pieces.split { bytes in
                let matches = Self.scalarMatches(bytes) { scalarIs($1, ScalarCategory.number) }
                return (individual ? SplitBehavior.isolated : .contiguous)
                    .pieces(length: bytes.count, matches: matches, invert: false)
            }
        case .whitespace:
            PreTokenizer.split(Self.wordsOrSymbols, .removed, invert: true)
                .apply(to: &pieces, scratch: &scratch)
        case .whitespaceSplit:
            pieces.split { bytes in
                SplitBehavior.removed.pieces(
                    length: bytes.count,
                    matches: Self.scalarMatches(bytes) { scalarIsWhitespace($1) }, invert: false)
            }
        case .punctuation(let behavior):
            pieces.split { bytes in
                let matches = Self.scalarMatches(bytes) { v, packed in
                    scalarIs(packed, ScalarCategory.punctuation)
                        || (v < 0x80 && Self.asciiPunctuation.contains(UInt8(v)))
                }
                return behavior.pieces(length: bytes.count, matches: matches, invert: false)
            }
        }
    }

    private static let asciiPunctuation = Set(Array("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~".utf8))

    /// One match per scalar satisfying `test` (tokenizers' `Pattern` for `Fn(char) -> bool`).
    private static func scalarMatches(
        _ bytes: UnsafeBufferPointer<UInt8>, _ test: (UInt32, UInt8) -> Bool
    ) -> [Range<Int>] {
        var matches: [Range<Int>] = []
        var i = 0
        while i < bytes.count {
            let (scalar, length) = decodeUTF8(bytes, at: i)
            if test(scalar, ScalarCategory.of(scalar)) { matches.append(i..<(i + length)) }
            i += length
        }
        return matches
    }

    /// Spaces become the replacement, which is prepended per the scheme; then each piece is
    /// cut before every replacement character (MergedWithNext).
    private func applyMetaspace(
        _ pieces: inout Pieces, _ replacement: [UInt8], _ scheme: PrependScheme, _ split: Bool
    ) {
        for i in pieces.ranges.indices {
            var bytes: [UInt8] = []
            for b in pieces.bytes(i) {
                if b == 0x20 { bytes.append(contentsOf: replacement) } else { bytes.append(b) }
            }
            let startsWithReplacement = bytes.starts(with: replacement)
            switch scheme {
            case .always where !startsWithReplacement,
                .first where !startsWithReplacement && pieces.atOrigin[i]:
                bytes = replacement + bytes
            default: break
            }
            pieces.rewrite(i, bytes)
        }
        guard split else { return }
        pieces.split { bytes in
            let matches = SplitPattern.literalMatches(replacement, in: bytes)
            return SplitBehavior.mergedWithNext.pieces(
                length: bytes.count, matches: matches, invert: false)
        }
    }
}

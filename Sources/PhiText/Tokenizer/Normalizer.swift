import Foundation

/// tokenizer.json's `normalizer`: rewrites text before pre-tokenization (the Phi-3 family
/// prepends `▁` and turns spaces into `▁` here).
indirect enum Normalizer: Sendable {
    case sequence([Normalizer])
    case prepend([UInt8])
    case replace(SplitPattern, [UInt8])
    /// Removes White_Space from the ends.
    case strip(left: Bool, right: Bool)
    case nfc, nfd, nfkc, nfkd
    case lowercase

    init(_ r: ComponentReader) throws(TokenizerBuildError) {
        switch try r.type() {
        case "Sequence": self = .sequence(try r.array("normalizers").map(Normalizer.init))
        case "Prepend": self = .prepend(Array(try r.string("prepend").utf8))
        case "Replace":
            self = .replace(try r.pattern("pattern"), Array(try r.string("content").utf8))
        case "Strip":
            self = .strip(
                left: try r.bool("strip_left", default: true),
                right: try r.bool("strip_right", default: true))
        case "NFC": self = .nfc
        case "NFD": self = .nfd
        case "NFKC": self = .nfkc
        case "NFKD": self = .nfkd
        case "Lowercase": self = .lowercase
        default: try r.unsupported("normalizer")
        }
    }

    /// The normalized form of `text` (valid UTF-8 in, valid UTF-8 out).
    func apply(_ text: [UInt8], scratch: inout ScalarText) -> [UInt8] {
        switch self {
        case .sequence(let steps):
            var out = text
            for step in steps { out = step.apply(out, scratch: &scratch) }
            return out
        case .prepend(let prefix):
            return text.isEmpty ? text : prefix + text
        case .replace(let pattern, let content):
            let matches = text.withUnsafeBufferPointer {
                pattern.matches(in: $0, scratch: &scratch)
            }
            guard !matches.isEmpty else { return text }
            var out: [UInt8] = []
            out.reserveCapacity(text.count + matches.count * content.count)
            var previous = 0
            for m in matches {
                out.append(contentsOf: text[previous..<m.lowerBound])
                out.append(contentsOf: content)
                previous = m.upperBound
            }
            out.append(contentsOf: text[previous...])
            return out
        case .strip(let left, let right):
            return text.withUnsafeBufferPointer { bytes in
                let range = Self.stripped(bytes, left: left, right: right)
                return Array(bytes[range])
            }
        case .nfc: return Self.foundation(text) { $0.precomposedStringWithCanonicalMapping }
        case .nfd: return Self.foundation(text) { $0.decomposedStringWithCanonicalMapping }
        case .nfkc: return Self.foundation(text) { $0.precomposedStringWithCompatibilityMapping }
        case .nfkd: return Self.foundation(text) { $0.decomposedStringWithCompatibilityMapping }
        case .lowercase: return Self.foundation(text) { $0.lowercased() }
        }
    }

    private static func foundation(_ text: [UInt8], _ transform: (String) -> String) -> [UInt8] {
        Array(transform(String(decoding: text, as: UTF8.self)).utf8)
    }

    /// The byte range left after removing leading/trailing White_Space scalars.
    static func stripped(
        _ bytes: UnsafeBufferPointer<UInt8>, left: Bool, right: Bool
    ) -> Range<Int> {
        var start = 0
        var end = bytes.count
        if left {
            while start < end {
                let (scalar, length) = decodeUTF8(bytes, at: start)
                guard scalarIsWhitespace(ScalarCategory.of(scalar)) else { break }
                start += length
            }
        }
        if right {
            while end > start {
                var lead = end - 1
                while lead > start && bytes[lead] & 0xC0 == 0x80 { lead -= 1 }
                let (scalar, _) = decodeUTF8(bytes, at: lead)
                guard scalarIsWhitespace(ScalarCategory.of(scalar)) else { break }
                end = lead
            }
        }
        return start..<end
    }
}

/// tokenizer.json's `decoder`: turns token strings back into text, step by step as in
/// `tokenizers` (each step maps the list of strings to a new list; the result is joined).
indirect enum TokenDecoder: Sendable {
    case sequence([TokenDecoder])
    case replace(SplitPattern, String)
    /// `<0xNN>` pieces become bytes; a run of them that is not valid UTF-8 becomes one U+FFFD
    /// per byte.
    case byteFallback
    case fuse
    /// Removes up to `start` leading and `stop` trailing `content` characters of each string.
    case strip(content: Unicode.Scalar, start: Int, stop: Int)
    case metaspace(replacement: Unicode.Scalar, prependScheme: PreTokenizer.PrependScheme)
    /// Maps GPT-2 alphabet characters back to bytes, then decodes them as (lossy) UTF-8.
    case byteLevel

    init(_ r: ComponentReader) throws(TokenizerBuildError) {
        switch try r.type() {
        case "Sequence": self = .sequence(try r.array("decoders").map(TokenDecoder.init))
        case "Replace": self = .replace(try r.pattern("pattern"), try r.string("content"))
        case "ByteFallback": self = .byteFallback
        case "Fuse": self = .fuse
        case "Strip":
            self = .strip(
                content: try r.character("content").unicodeScalars.first!,
                start: max(0, try r.int("start", default: 0)),
                stop: max(0, try r.int("stop", default: 0)))
        case "Metaspace":
            var scheme = PreTokenizer.PrependScheme.always
            if let name = try r.optionalString("prepend_scheme") {
                guard let s = PreTokenizer.PrependScheme(rawValue: name) else {
                    throw .invalid(r.path + ".prepend_scheme", "unknown scheme '\(name)'")
                }
                scheme = s
            }
            if try r.bool("add_prefix_space", default: true) == false { scheme = .never }
            self = .metaspace(
                replacement: try r.character("replacement").unicodeScalars.first!,
                prependScheme: scheme)
        case "ByteLevel": self = .byteLevel
        default: try r.unsupported("decoder")
        }
    }

    /// One step of the chain. With `final == false` (streaming), a trailing byte sequence that
    /// may still become a character sets `incomplete` instead of turning into U+FFFD.
    func decodeChain(_ tokens: [String], final: Bool, incomplete: inout Bool) -> [String] {
        switch self {
        case .sequence(let steps):
            return steps.reduce(tokens) {
                $1.decodeChain($0, final: final, incomplete: &incomplete)
            }
        case .replace(let pattern, let content):
            var scratch = ScalarText()
            return tokens.map { token in
                var utf8 = Array(token.utf8)
                let matches = utf8.withUnsafeBufferPointer {
                    pattern.matches(in: $0, scratch: &scratch)
                }
                guard !matches.isEmpty else { return token }
                var out = ""
                var previous = 0
                for m in matches {
                    out += String(decoding: utf8[previous..<m.lowerBound], as: UTF8.self) + content
                    previous = m.upperBound
                }
                utf8.removeFirst(previous)
                return out + String(decoding: utf8, as: UTF8.self)
            }
        case .byteFallback:
            return Self.byteFallback(tokens, final: final, incomplete: &incomplete)
        case .fuse:
            return [tokens.joined()]
        case .strip(let content, let start, let stop):
            return tokens.map { Self.strip($0, content, start, stop) }
        case .metaspace(let replacement, let scheme):
            return tokens.enumerated().map { index, token in
                var out = String.UnicodeScalarView()
                for s in token.unicodeScalars {
                    if s != replacement {
                        out.append(s)
                    } else if index != 0 || scheme == .never {
                        out.append(" ")
                    }
                }
                return String(out)
            }
        case .byteLevel:
            var bytes: [UInt8] = []
            for token in tokens {
                let utf8 = Array(token.utf8)
                bytes += utf8.withUnsafeBufferPointer { ByteLevelAlphabet.rawBytes(of: $0) } ?? utf8
            }
            if !final, UTF8Completion.hasIncompleteTail(bytes) { incomplete = true }
            return [String(decoding: bytes, as: UTF8.self)]
        }
    }

    private static func byteFallback(
        _ tokens: [String], final: Bool, incomplete: inout Bool
    ) -> [String] {
        var out: [String] = []
        var run: [UInt8] = []
        func flush(atEnd: Bool) {
            guard !run.isEmpty else { return }
            if let text = String(validating: run, as: UTF8.self) {
                out.append(text)
            } else if atEnd, !final, UTF8Completion.isIncompletePrefix(run) {
                incomplete = true
            } else {
                out.append(contentsOf: repeatElement("\u{FFFD}", count: run.count))
            }
            run.removeAll()
        }
        for token in tokens {
            if let byte = Self.fallbackByte(token) {
                run.append(byte)
            } else {
                flush(atEnd: false)
                out.append(token)
            }
        }
        flush(atEnd: true)
        return out
    }

    /// The byte of a `<0xNN>` token (6 bytes, `u8::from_str_radix` on the two after `0x`).
    static func fallbackByte(_ token: String) -> UInt8? {
        let u = Array(token.utf8)
        guard u.count == 6, u[0] == 0x3C, u[1] == 0x30, u[2] == 0x78, u[5] == 0x3E else {
            return nil
        }
        // from_str_radix accepts a leading '+': "<0x+F>" is 15.
        if u[3] == 0x2B { return asciiHexValue(UInt32(u[4])) }
        guard let hi = asciiHexValue(UInt32(u[3])), let lo = asciiHexValue(UInt32(u[4])) else {
            return nil
        }
        return hi << 4 | lo
    }

    private static func strip(
        _ token: String, _ content: Unicode.Scalar, _ start: Int, _ stop: Int
    )
        -> String
    {
        let scalars = Array(token.unicodeScalars)
        var startCut = 0
        while startCut < min(start, scalars.count), scalars[startCut] == content { startCut += 1 }
        var stopCut = scalars.count
        var removed = 0
        while removed < stop, stopCut > startCut, scalars[stopCut - 1] == content {
            stopCut -= 1
            removed += 1
        }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars[startCut..<stopCut])
        return String(out)
    }
}

/// Whether bytes end in the middle of a UTF-8 character.
enum UTF8Completion {
    /// True when `bytes` is not valid UTF-8 but could become valid by appending bytes.
    static func isIncompletePrefix(_ bytes: [UInt8]) -> Bool {
        var i = 0
        while i < bytes.count {
            let need = expectedLength(bytes[i])
            guard need > 0 else { return false }
            for k in 1..<need {
                if i + k >= bytes.count { return true }
                guard isValidContinuation(bytes[i], k, bytes[i + k]) else { return false }
            }
            i += need
        }
        return false
    }

    /// True when the last 1–3 bytes are the valid start of a character that is not finished.
    static func hasIncompleteTail(_ bytes: [UInt8]) -> Bool {
        let n = bytes.count
        for back in 1...3 where back <= n {
            let lead = bytes[n - back]
            if lead & 0xC0 == 0x80 { continue }  // a continuation byte: keep looking back
            let need = expectedLength(lead)
            guard need > back else { return false }
            for k in 1..<back where !isValidContinuation(lead, k, bytes[n - back + k]) {
                return false
            }
            return true
        }
        return false
    }

    /// Length of the sequence a lead byte starts; 0 for bytes that cannot start one.
    private static func expectedLength(_ lead: UInt8) -> Int {
        switch lead {
        case 0x00...0x7F: 1
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        case 0xF0...0xF4: 4
        default: 0
        }
    }

    /// Continuation byte `k` (1-based) after `lead`, with the narrower second-byte ranges
    /// that exclude overlong forms, surrogates and values past U+10FFFF.
    private static func isValidContinuation(_ lead: UInt8, _ k: Int, _ b: UInt8) -> Bool {
        if k == 1 {
            switch lead {
            case 0xE0: return (0xA0...0xBF).contains(b)
            case 0xED: return (0x80...0x9F).contains(b)
            case 0xF0: return (0x90...0xBF).contains(b)
            case 0xF4: return (0x80...0x8F).contains(b)
            default: break
            }
        }
        return b & 0xC0 == 0x80
    }
}

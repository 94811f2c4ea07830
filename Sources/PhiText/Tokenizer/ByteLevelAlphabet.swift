/// GPT-2's byte-to-character map (tokenizers' `bytes_char`): printable Latin-1 bytes stand for
/// themselves, the other 68 bytes for U+0100…U+0143, so every byte has a visible character
/// and byte-level vocabularies can be JSON strings.
enum ByteLevelAlphabet {
    /// (256) the scalar that stands for each byte.
    static let scalarForByte: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 256)
        var next: UInt32 = 256
        for b in 0..<256 {
            let printable =
                (0x21...0x7E).contains(b) || (0xA1...0xAC).contains(b)
                || (0xAE...0xFF).contains(b)
            if printable {
                table[b] = UInt32(b)
            } else {
                table[b] = next
                next += 1
            }
        }
        return table
    }()

    /// (0x144) the byte each alphabet scalar stands for, or -1.
    static let byteForScalar: [Int16] = {
        var table = [Int16](repeating: -1, count: 0x144)
        for (b, s) in scalarForByte.enumerated() { table[Int(s)] = Int16(b) }
        return table
    }()

    /// The raw bytes a byte-level token string stands for; nil when it has a character
    /// outside the alphabet (added tokens such as `<|end|>` are all inside it).
    static func rawBytes(of token: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        if token.isEmpty { return [] }
        var out = [UInt8](repeating: 0, count: token.count)
        guard
            let n = out.withUnsafeMutableBufferPointer({
                rawBytes(of: token, into: $0.baseAddress!)
            })
        else { return nil }
        out.removeLast(token.count - n)
        return out
    }

    /// Writes the raw bytes of `token` to `out` (room for `token.count` bytes) and returns
    /// how many; nil when a character is outside the alphabet.
    @inline(__always)
    static func rawBytes(
        of token: UnsafeBufferPointer<UInt8>, into out: UnsafeMutablePointer<UInt8>
    )
        -> Int?
    {
        var i = 0
        var n = 0
        while i < token.count {
            let (scalar, length) = decodeUTF8(token, at: i)
            guard scalar < 0x144 else { return nil }
            let b = byteForScalar[Int(scalar)]
            guard b >= 0 else { return nil }
            out[n] = UInt8(b)
            n += 1
            i += length
        }
        return n
    }

    /// The alphabet string for raw bytes (what a byte-level tokenizer shows as a token).
    static func string(forRaw bytes: some Sequence<UInt8>) -> String {
        var s = String.UnicodeScalarView()
        for b in bytes { s.append(Unicode.Scalar(scalarForByte[Int(b)])!) }
        return String(s)
    }
}

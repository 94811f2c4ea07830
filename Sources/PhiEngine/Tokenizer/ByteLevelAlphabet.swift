/// GPT-2's byte-to-character map (tokenizers' `bytes_char`): printable Latin-1 bytes stand for
/// themselves, the other 68 bytes for U+0100…U+0143, so every byte has a visible character
/// and byte-level vocabularies can be JSON strings.
enum ByteLevelAlphabet {
    /// (256) the scalar that stands for each byte.
    static let scalarForByte: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 256)
        var next: UInt32 = 256
        for b in 0..<256 {
            let printable = (0x21...0x7E).contains(b) || (0xA1...0xAC).contains(b)
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
    static func rawBytes(of token: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) -> Bool {
        out.removeAll(keepingCapacity: true)
        var i = 0
        while i < token.count {
            let (scalar, length) = decodeUTF8(token, at: i)
            guard scalar < 0x144, case let b = byteForScalar[Int(scalar)], b >= 0 else {
                return false
            }
            out.append(UInt8(b))
            i += length
        }
        return true
    }

    /// The alphabet string for raw bytes (what a byte-level tokenizer shows as a token).
    static func string(forRaw bytes: some Sequence<UInt8>) -> String {
        var s = String.UnicodeScalarView()
        for b in bytes { s.append(Unicode.Scalar(scalarForByte[Int(b)])!) }
        return String(s)
    }
}

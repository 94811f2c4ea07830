/// The pieces of pattern syntax that regular expressions and GBNF read alike, over a
/// pattern's scalars from index `i` (moved past what is read).
enum ScalarReading {
    struct Problem: Error {
        let message: String
    }

    /// A decimal number (capped at 10⁹), nil when no digit is there.
    static func decimal(_ scalars: [UInt32], _ i: inout Int) -> Int? {
        var value: Int? = nil
        while i < scalars.count, scalars[i] >= 0x30 && scalars[i] <= 0x39 {
            value = min((value ?? 0) * 10 + Int(scalars[i] - 0x30), 1_000_000_000)
            i += 1
        }
        return value
    }

    /// `digits` hexadecimal digits naming a Unicode scalar (not a surrogate).
    static func hexScalar(_ scalars: [UInt32], _ i: inout Int, digits: Int) -> Result<UInt32, Problem> {
        var value: UInt32 = 0
        for _ in 0..<digits {
            guard i < scalars.count, let d = Character(Unicode.Scalar(scalars[i])!).hexDigitValue
            else { return .failure(Problem(message: "bad hexadecimal escape")) }
            value = value * 16 + UInt32(d)
            i += 1
        }
        guard value <= ScalarSet.maxScalar, !(0xD800...0xDFFF).contains(value) else {
            return .failure(Problem(message: "escape of an invalid character U+\(String(value, radix: 16))"))
        }
        return .success(value)
    }
}

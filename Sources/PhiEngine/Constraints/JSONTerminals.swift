/// The byte patterns of JSON's scalar values as phikit generates them: strings (with every
/// escape but lone surrogates), numbers and integers with a bounded number of digits (a
/// model cannot loop in a digit run forever), integer ranges, and the string formats.
enum JSONTerminals {
    /// The most digits of an integer or of a fraction phikit generates.
    static let maxDigits = 18

    static let digit = Pattern.bytes(ByteSet(0x30, 0x39))
    static let nonZeroDigit = Pattern.bytes(ByteSet(0x31, 0x39))

    /// One character inside a JSON string: any scalar but `"`, `\` and controls, or an
    /// escape. `\u` escapes of surrogates are left out so that every generated character
    /// counts as one character for minLength/maxLength (Python joins surrogate pairs).
    static var stringCharacter: Pattern {
        let plain = ScalarSet([0x20...0x21, 0x23...0x5B, 0x5D...ScalarSet.maxScalar])
        let hex = Pattern.bytes(hexDigits)
        let nonSurrogateHex4 = Pattern.choice([
            .sequence([.bytes(nonDHex), hex, hex, hex]),
            .sequence([.bytes(ByteSet(0x64)), .bytes(ByteSet(0x30, 0x37)), hex, hex]),
            .sequence([.bytes(ByteSet(0x44)), .bytes(ByteSet(0x30, 0x37)), hex, hex]),
        ])
        var escapes = ByteSet()
        for c in "\"\\/bfnrt".utf8 { escapes.insert(c) }
        return .choice([
            plain.pattern,
            .sequence([.literal("\\"), .choice([.bytes(escapes), .sequence([.literal("u"), nonSurrogateHex4])])]),
        ])
    }

    static var hexDigits: ByteSet {
        var set = ByteSet(0x30, 0x39)
        set.formUnion(ByteSet(0x41, 0x46))
        set.formUnion(ByteSet(0x61, 0x66))
        return set
    }

    private static var nonDHex: ByteSet {
        var set = ByteSet(0x30, 0x39)
        set.formUnion(ByteSet(0x41, 0x43))
        set.formUnion(ByteSet(0x45, 0x46))
        set.formUnion(ByteSet(0x61, 0x63))
        set.formUnion(ByteSet(0x65, 0x66))
        return set
    }

    /// `-?(0|[1-9][0-9]*)` with at most `maxDigits` digits.
    static var integer: Pattern {
        .sequence([.optional(.literal("-")), unsignedInteger])
    }

    static var unsignedInteger: Pattern {
        .choice([.literal("0"), .sequence([nonZeroDigit, .repetition(digit, min: 0, max: maxDigits - 1)])])
    }

    static var fraction: Pattern {
        .sequence([.literal("."), .repetition(digit, min: 1, max: maxDigits)])
    }

    static var exponent: Pattern {
        var e = ByteSet(0x45)
        e.insert(0x65)
        var sign = ByteSet(0x2B)
        sign.insert(0x2D)
        return .sequence([.bytes(e), .optional(.bytes(sign)), .repetition(digit, min: 1, max: 2)])
    }

    static var number: Pattern {
        .sequence([integer, .optional(fraction), .optional(exponent)])
    }

    // MARK: Integer ranges

    /// The decimal integers in lower...upper (nil: unbounded, within `maxDigits` digits).
    static func integer(from lower: Int?, to upper: Int?) -> Pattern {
        let limit = Int(String(repeating: "9", count: maxDigits))!
        let lo = max(lower ?? -limit, -limit)
        let hi = min(upper ?? limit, limit)
        guard lo <= hi else { return .bytes(ByteSet()) }
        var options: [Pattern] = []
        if lo < 0 {  // -|x| for x in lo...min(hi, -1)
            options.append(.sequence([.literal("-"), unsigned(from: max(1, -min(hi, -1)), to: -lo)]))
        }
        if hi >= 0 { options.append(unsigned(from: max(lo, 0), to: hi)) }
        return options.count == 1 ? options[0] : .choice(options)
    }

    /// The integers a...b (0 ≤ a ≤ b) without leading zeros: split by digit count, then each
    /// same-length range digit by digit.
    static func unsigned(from a: Int, to b: Int) -> Pattern {
        var options: [Pattern] = []
        var length = String(a).count
        while length <= String(b).count {
            let first = length == 1 ? 0 : Int(pow10(length - 1))
            let last = Int(pow10(length)) - 1
            let lo = max(a, first), hi = min(b, last)
            if lo <= hi { options.append(sameLength(Array(String(lo).utf8), Array(String(hi).utf8))) }
            length += 1
        }
        return options.count == 1 ? options[0] : .choice(options)
    }

    private static func pow10(_ n: Int) -> Int {
        var v = 1
        for _ in 0..<n { v *= 10 }
        return v
    }

    /// Digit strings of one length between lo and hi inclusive.
    private static func sameLength(_ lo: [UInt8], _ hi: [UInt8]) -> Pattern {
        if lo.count == 1 { return .bytes(ByteSet(lo[0], hi[0])) }
        let restLo = Array(lo.dropFirst()), restHi = Array(hi.dropFirst())
        if lo[0] == hi[0] { return .sequence([.literal([lo[0]]), sameLength(restLo, restHi)]) }
        let zeros = [UInt8](repeating: 0x30, count: restLo.count)
        let nines = [UInt8](repeating: 0x39, count: restLo.count)
        var options: [Pattern] = []
        var middleLow = lo[0] + 1, middleHigh = hi[0] - 1
        if restLo == zeros {
            middleLow = lo[0]
        } else {
            options.append(.sequence([.literal([lo[0]]), sameLength(restLo, nines)]))
        }
        if restHi == nines { middleHigh = hi[0] }
        if middleLow <= middleHigh {
            options.append(
                .sequence([.bytes(ByteSet(middleLow, middleHigh)), .repetition(digit, min: restLo.count, max: restLo.count)]))
        }
        if restHi != nines { options.append(.sequence([.literal([hi[0]]), sameLength(zeros, restHi)])) }
        return options.count == 1 ? options[0] : .choice(options)
    }

    // MARK: Formats

    /// The regular expressions of the supported `format`s (what Python's jsonschema format
    /// checker accepts: real calendar dates — February 29 left out — and RFC 3339 times).
    static let formats: [String: String] = {
        let date =
            "[1-9][0-9]{3}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
            + "|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))"
        let time =
            "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,6})?"
            + "(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])"
        let hex = "[0-9a-fA-F]"
        return [
            "date": date,
            "time": time,
            "date-time": date + "T" + time,
            "uuid": "\(hex){8}-\(hex){4}-\(hex){4}-\(hex){4}-\(hex){12}",
            "email":
                "[a-zA-Z0-9][a-zA-Z0-9._+-]{0,39}@[a-zA-Z0-9][a-zA-Z0-9-]{0,39}"
                + "(?:\\.[a-zA-Z0-9][a-zA-Z0-9-]{0,39}){0,3}\\.[a-zA-Z]{2,8}",
        ]
    }()
}

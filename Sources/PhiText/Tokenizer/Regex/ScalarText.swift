/// A piece of UTF-8 text decoded once into scalars, their packed categories and byte
/// offsets, so pattern matchers can index by scalar and report byte ranges. Reused between
/// pieces to avoid allocation.
struct ScalarText {
    /// (count) the scalars' values.
    var scalars: [UInt32] = []
    /// (count) `ScalarCategory` bytes.
    var packed: [UInt8] = []
    /// (count + 1) byte offset of each scalar relative to the piece start; last = byte length.
    var offsets: [Int] = []
    /// Set when a regex match ran out of `RegexBudget` on this text (the matches found are
    /// then incomplete); `Tokenizer.encode` turns it into an error.
    var regexBudgetExceeded = false

    var count: Int { scalars.count }

    /// Decodes `bytes`, which must be valid UTF-8 (everything inside the tokenizer is).
    mutating func load(_ bytes: UnsafeBufferPointer<UInt8>) {
        scalars.removeAll(keepingCapacity: true)
        packed.removeAll(keepingCapacity: true)
        offsets.removeAll(keepingCapacity: true)
        var i = 0
        while i < bytes.count {
            let (value, length) = decodeUTF8(bytes, at: i)
            scalars.append(value)
            packed.append(value < 0x80 ? asciiCategory[Int(value)] : ScalarCategory.of(value))
            offsets.append(i)
            i += length
        }
        offsets.append(bytes.count)
    }
}

/// The packed categories of ASCII, looked up without touching the big table.
let asciiCategory: [UInt8] = (0..<128).map { ScalarCategory.of(UInt32($0)) }

/// Decodes the scalar starting at `i` of valid UTF-8; returns its value and byte length.
@inline(__always)
func decodeUTF8(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> (UInt32, Int) {
    let b0 = UInt32(bytes[i])
    if b0 < 0x80 { return (b0, 1) }
    if b0 < 0xE0 { return ((b0 & 0x1F) << 6 | UInt32(bytes[i + 1] & 0x3F), 2) }
    if b0 < 0xF0 {
        return (
            (b0 & 0x0F) << 12 | UInt32(bytes[i + 1] & 0x3F) << 6 | UInt32(bytes[i + 2] & 0x3F), 3
        )
    }
    let v =
        (b0 & 0x07) << 18 | UInt32(bytes[i + 1] & 0x3F) << 12 | UInt32(bytes[i + 2] & 0x3F) << 6
        | UInt32(bytes[i + 3] & 0x3F)
    return (v, 4)
}

/// Byte length of the UTF-8 sequence that starts with `lead` (1 for stray continuation bytes).
@inline(__always)
func utf8Length(lead: UInt8) -> Int {
    lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4
}

/// The value of an ASCII hexadecimal digit (`0-9`, `A-F`, `a-f`), for `\x` escapes, JSON's
/// `\uXXXX` and `<0xNN>` byte tokens.
@inline(__always)
func asciiHexValue(_ c: UInt32) -> UInt8? {
    switch c {
    case 0x30...0x39: UInt8(c - 0x30)
    case 0x41...0x46: UInt8(c - 0x41 + 10)
    case 0x61...0x66: UInt8(c - 0x61 + 10)
    default: nil
    }
}

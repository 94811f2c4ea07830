import PhiFormats

/// A minimal JSON scanner over tokenizer.json's bytes, for the parts that are too big for a
/// JSON tree: it reads strings straight into byte buffers and integers without building
/// values, and finds where any other value ends so that `JSONValue` can parse just that slice.
///
/// Parsing the 15 MB, 200k-token Phi-4 file as a `JSONValue` tree would allocate ~600k
/// strings and arrays before the tokenizer even starts building its tables.
struct TokenizerJSONScanner {
    struct Failure: Error {
        var offset: Int
        var reason: String
    }

    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func fail(_ reason: String) -> Failure { Failure(offset: position, reason: reason) }

    mutating func skipWhitespace() {
        while position < bytes.count, JSONValue.isWhitespace(bytes[position]) { position += 1 }
    }

    /// The next non-whitespace byte, not consumed.
    mutating func peek() throws(Failure) -> UInt8 {
        skipWhitespace()
        guard position < bytes.count else { throw fail("unexpected end of input") }
        return bytes[position]
    }

    mutating func expect(_ byte: UInt8) throws(Failure) {
        guard try peek() == byte else {
            throw fail("expected '\(Character(Unicode.Scalar(byte)))'")
        }
        position += 1
    }

    /// Consumes `byte` if it is next.
    mutating func eat(_ byte: UInt8) throws(Failure) -> Bool {
        guard try peek() == byte else { return false }
        position += 1
        return true
    }

    /// Iterates an object's members: `body` is called after each key with the scanner placed
    /// on the value, and must consume the value. A key given twice is refused, as by
    /// `JSONValue` (one JSON policy for every file a model brings).
    mutating func object(_ body: (inout Self, [UInt8]) throws(Failure) -> Void) throws(Failure) {
        try expect(0x7B)
        if try eat(0x7D) { return }
        var seen: Set<[UInt8]> = []
        repeat {
            var key: [UInt8] = []
            _ = try peek()
            let keyOffset = position
            try string(into: &key)
            guard seen.insert(key).inserted else {
                throw Failure(
                    offset: keyOffset,
                    reason: "duplicate key \"\(String(decoding: key, as: UTF8.self))\"")
            }
            try expect(0x3A)
            try body(&self, key)
        } while try eat(0x2C)
        try expect(0x7D)
    }

    /// Iterates an array's elements; `body` must consume each element.
    mutating func array(_ body: (inout Self) throws(Failure) -> Void) throws(Failure) {
        try expect(0x5B)
        if try eat(0x5D) { return }
        repeat { try body(&self) } while try eat(0x2C)
        try expect(0x5D)
    }

    /// Reads a string's decoded UTF-8 bytes (escapes resolved, UTF-8 validated), appending
    /// them to `out`. Runs of plain bytes are copied at once.
    mutating func string(into out: inout [UInt8]) throws(Failure) {
        try expect(0x22)
        var runStart = position
        while true {
            guard position < bytes.count else { throw fail("unterminated string") }
            let b = bytes[position]
            if b == 0x22 {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                position += 1
                return
            }
            if b == 0x5C {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<position]))
                try escape(into: &out)
                runStart = position
            } else if b < 0x20 {
                throw fail("unescaped control character in string")
            } else if b < 0x80 {
                position += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// Checks the multi-byte UTF-8 sequence at `position` (no overlong forms, surrogates or
    /// values past U+10FFFF) and steps over it.
    private mutating func skipUTF8Sequence() throws(Failure) {
        let lead = bytes[position]
        let length: Int
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF: length = 3
        case 0xF0...0xF4: length = 4
        default: throw fail("invalid UTF-8")
        }
        guard position + length <= bytes.count else { throw fail("invalid UTF-8") }
        let second = bytes[position + 1]
        let secondOK =
            switch lead {
            case 0xE0: (0xA0...0xBF).contains(second)
            case 0xED: (0x80...0x9F).contains(second)
            case 0xF0: (0x90...0xBF).contains(second)
            case 0xF4: (0x80...0x8F).contains(second)
            default: second & 0xC0 == 0x80
            }
        guard secondOK else { throw fail("invalid UTF-8") }
        for k in 2..<max(2, length) where bytes[position + k] & 0xC0 != 0x80 {
            throw fail("invalid UTF-8")
        }
        position += length
    }

    private mutating func escape(into out: inout [UInt8]) throws(Failure) {
        guard position + 1 < bytes.count else { throw fail("unterminated string") }
        let c = bytes[position + 1]
        position += 2
        switch c {
        case 0x22, 0x5C, 0x2F: out.append(c)
        case 0x62: out.append(0x08)
        case 0x66: out.append(0x0C)
        case 0x6E: out.append(0x0A)
        case 0x72: out.append(0x0D)
        case 0x74: out.append(0x09)
        case 0x75:
            var value = UInt32(try hex4())
            if (0xD800...0xDBFF).contains(value) {
                guard position + 1 < bytes.count, bytes[position] == 0x5C,
                    bytes[position + 1] == 0x75
                else { throw fail("unpaired UTF-16 surrogate in \\u escape") }
                position += 2
                let low = UInt32(try hex4())
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw fail("unpaired UTF-16 surrogate in \\u escape")
                }
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(value) {
                throw fail("unpaired UTF-16 surrogate in \\u escape")
            }
            out.append(contentsOf: Unicode.UTF8.encode(Unicode.Scalar(value)!)!)
        default:
            throw fail("invalid escape sequence")
        }
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        guard position + 4 <= bytes.count else { throw fail("invalid \\u escape") }
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let digit = asciiHexValue(UInt32(bytes[position])) else {
                throw fail("invalid \\u escape")
            }
            value = value << 4 | UInt16(digit)
            position += 1
        }
        return value
    }

    /// An integer that fits in Int32 (token ids).
    mutating func int32() throws(Failure) -> Int32 {
        _ = try peek()
        var negative = false
        if bytes[position] == 0x2D {
            negative = true
            position += 1
        }
        var value: Int64 = 0
        let start = position
        while position < bytes.count, (0x30...0x39).contains(bytes[position]) {
            value = value * 10 + Int64(bytes[position] - 0x30)
            guard value <= Int64(Int32.max) else { throw fail("id out of range") }
            position += 1
        }
        guard position > start else { throw fail("expected an integer") }
        // JSON has no leading zeros (`007`), as JSONValue's parser says.
        guard bytes[start] != 0x30 || position == start + 1 else { throw fail("invalid number") }
        if position < bytes.count, [0x2E, 0x65, 0x45].contains(bytes[position]) {
            throw fail("expected an integer")
        }
        return Int32(negative ? -value : value)
    }

    /// Skips one value of any kind and returns its byte range (for `JSONValue(parsing:)`).
    mutating func skipValue() throws(Failure) -> Range<Int> {
        let start = try { () throws(Failure) -> Int in
            _ = try peek()
            return position
        }()
        var depth = 0
        repeat {
            switch try peek() {
            case 0x7B, 0x5B:
                depth += 1
                position += 1
            case 0x7D, 0x5D:
                guard depth > 0 else { throw fail("unbalanced bracket") }
                depth -= 1
                position += 1
            case 0x22:
                var ignored: [UInt8] = []
                try string(into: &ignored)
            case 0x2C, 0x3A:
                guard depth > 0 else { throw fail("unexpected separator") }
                position += 1
            default:
                // A literal or number: up to the next structural byte or whitespace.
                let literalStart = position
                while position < bytes.count, !JSONValue.isWhitespace(bytes[position]),
                    ![0x2C, 0x7D, 0x5D, 0x3A].contains(bytes[position])
                {
                    position += 1
                }
                guard position > literalStart else { throw fail("unexpected character") }
            }
        } while depth > 0
        return start..<position
    }
}

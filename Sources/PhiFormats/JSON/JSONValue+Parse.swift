/// Why a JSON text was rejected, and where.
public struct JSONError: UserFacingError, Equatable {
    public enum Kind: Sendable, Equatable {
        case unexpectedEnd
        case unexpectedByte(UInt8)
        case invalidUTF8
        case controlCharacterInString
        case invalidEscape
        /// A `\uXXXX` escape that is a lone surrogate (Swift strings can't hold one).
        case loneSurrogate
        case invalidNumber
        case duplicateKey(String)
        /// Nested deeper than `JSONValue.maxDepth`.
        case tooDeep
        case trailingData
    }

    public let kind: Kind
    /// Byte offset into the parsed text.
    public let offset: Int
    /// Container nesting depth where the error was found: 0 outside any container, 1 directly
    /// inside the top-level object or array. Lets safetensors tell a duplicate tensor name
    /// (depth 1) from a duplicate field inside a tensor entry.
    public let depth: Int

    public var message: String { "invalid JSON at byte \(offset): \(reason)" }

    public var reason: String {
        switch kind {
        case .unexpectedEnd: "unexpected end of input"
        case .unexpectedByte(let b):
            (0x20..<0x7F).contains(b)
                ? "unexpected character '\(Character(Unicode.Scalar(b)))'"
                : "unexpected byte 0x\(String(b, radix: 16, uppercase: true))"
        case .invalidUTF8: "invalid UTF-8"
        case .controlCharacterInString: "unescaped control character in string"
        case .invalidEscape: "invalid escape sequence"
        case .loneSurrogate: "unpaired UTF-16 surrogate in \\u escape"
        case .invalidNumber: "invalid number"
        case .duplicateKey(let k): "duplicate key \"\(k)\""
        case .tooDeep: "nested deeper than \(JSONValue.maxDepth) levels"
        case .trailingData: "unexpected data after the JSON value"
        }
    }

    public var exitCode: ExitCode { .dataError }
}

extension JSONValue {
    /// Deepest container nesting accepted; bounds recursion on hostile input.
    public static let maxDepth = 512

    /// Parses one JSON value (RFC 8259), surrounded by optional whitespace.
    ///
    /// Rejects duplicate keys within an object, invalid UTF-8, trailing garbage and nesting
    /// deeper than `maxDepth`. Number literals are kept as written.
    public init(parsing bytes: some Collection<UInt8>) throws(JSONError) {
        func parse(_ buffer: UnsafeBufferPointer<UInt8>) -> Result<JSONValue, JSONError> {
            var parser = JSONParser(buffer)
            return Result { () throws(JSONError) in try parser.parseDocument() }
        }
        switch bytes.withContiguousStorageIfAvailable(parse)
            ?? Array(bytes).withUnsafeBufferPointer(parse)
        {
        case .success(let value): self = value
        case .failure(let error): throw error
        }
    }
}

/// A recursive-descent parser over a byte buffer. Every index is checked against `end`.
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var pos = 0
    var depth = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func fail(_ kind: JSONError.Kind, at offset: Int? = nil) -> JSONError {
        JSONError(kind: kind, offset: offset ?? pos, depth: depth)
    }

    var peek: UInt8? { pos < bytes.count ? bytes[pos] : nil }

    mutating func skipWhitespace() {
        while pos < bytes.count, JSONValue.isWhitespace(bytes[pos]) { pos += 1 }
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        guard pos == bytes.count else { throw fail(.trailingData) }
        return value
    }

    mutating func parseValue() throws(JSONError) -> JSONValue {
        skipWhitespace()
        guard let byte = peek else { throw fail(.unexpectedEnd) }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"):
            try expectWord("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectWord("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectWord("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail(.unexpectedByte(byte))
        }
    }

    mutating func expectWord(_ word: StaticString) throws(JSONError) {
        for expected in UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount) {
            guard let b = peek else { throw fail(.unexpectedEnd) }
            guard b == expected else { throw fail(.unexpectedByte(b)) }
            pos += 1
        }
    }

    mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= JSONValue.maxDepth else { throw fail(.tooDeep) }
        pos += 1  // the opening bracket
    }

    mutating func parseObject() throws(JSONError) -> JSONValue {
        var members: [(key: String, value: JSONValue)] = []
        var seen = Set<String>()
        try parseItems(closedBy: UInt8(ascii: "}")) { (p: inout JSONParser) throws(JSONError) in
            p.skipWhitespace()
            guard let b = p.peek else { throw p.fail(.unexpectedEnd) }
            guard b == UInt8(ascii: "\"") else { throw p.fail(.unexpectedByte(b)) }
            let keyOffset = p.pos
            let key = try p.parseString()
            guard seen.insert(key).inserted else { throw p.fail(.duplicateKey(key), at: keyOffset) }
            p.skipWhitespace()
            guard let colon = p.peek else { throw p.fail(.unexpectedEnd) }
            guard colon == UInt8(ascii: ":") else { throw p.fail(.unexpectedByte(colon)) }
            p.pos += 1
            members.append((key: key, value: try p.parseValue()))
        }
        return .object(members)
    }

    mutating func parseArray() throws(JSONError) -> JSONValue {
        var elements: [JSONValue] = []
        try parseItems(closedBy: UInt8(ascii: "]")) { (p: inout JSONParser) throws(JSONError) in
            elements.append(try p.parseValue())
        }
        return .array(elements)
    }

    /// An array's or object's items from its opening bracket to `close`: `item` reads each,
    /// and commas must separate them.
    private mutating func parseItems(
        closedBy close: UInt8, _ item: (inout JSONParser) throws(JSONError) -> Void
    ) throws(JSONError) {
        try enter()
        skipWhitespace()
        if peek == close {
            pos += 1
            depth -= 1
            return
        }
        while true {
            try item(&self)
            skipWhitespace()
            guard let next = peek else { throw fail(.unexpectedEnd) }
            pos += 1
            if next == close { break }
            guard next == UInt8(ascii: ",") else { throw fail(.unexpectedByte(next), at: pos - 1) }
        }
        depth -= 1
    }

    /// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
    mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = pos
        func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= 0x30 && $0 <= 0x39 } ?? false }
        if peek == UInt8(ascii: "-") { pos += 1 }
        if peek == UInt8(ascii: "0") {
            pos += 1
        } else if isDigit(peek) {
            while isDigit(peek) { pos += 1 }
        } else {
            throw fail(.invalidNumber, at: start)
        }
        if peek == UInt8(ascii: ".") {
            pos += 1
            guard isDigit(peek) else { throw fail(.invalidNumber, at: start) }
            while isDigit(peek) { pos += 1 }
        }
        if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
            pos += 1
            if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { pos += 1 }
            guard isDigit(peek) else { throw fail(.invalidNumber, at: start) }
            while isDigit(peek) { pos += 1 }
        }
        return .number(
            String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<pos]), as: UTF8.self))
    }

    /// Parses a string starting at its opening quote, validating UTF-8 as it goes.
    mutating func parseString() throws(JSONError) -> String {
        pos += 1  // opening quote
        var out: [UInt8] = []
        var runStart = pos  // start of the current run of plain bytes, copied in bulk
        while true {
            guard let b = peek else { throw fail(.unexpectedEnd) }
            if b == UInt8(ascii: "\"") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<pos]))
                pos += 1
                return String(decoding: out, as: UTF8.self)
            } else if b == UInt8(ascii: "\\") {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<pos]))
                try parseEscape(into: &out)
                runStart = pos
            } else if b < 0x20 {
                throw fail(.controlCharacterInString)
            } else if b < 0x80 {
                pos += 1
            } else {
                try skipUTF8Sequence()
            }
        }
    }

    /// Advances over one well-formed multi-byte UTF-8 sequence (no overlongs, no surrogates,
    /// nothing above U+10FFFF), per the table in Unicode §3.9.
    mutating func skipUTF8Sequence() throws(JSONError) {
        let b0 = bytes[pos]
        let count: Int
        var lo: UInt8 = 0x80
        var hi: UInt8 = 0xBF  // allowed range of the second byte
        switch b0 {
        case 0xC2...0xDF: count = 2
        case 0xE0:
            count = 3
            lo = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: count = 3
        case 0xED:
            count = 3
            hi = 0x9F
        case 0xF0:
            count = 4
            lo = 0x90
        case 0xF1...0xF3: count = 4
        case 0xF4:
            count = 4
            hi = 0x8F
        default: throw fail(.invalidUTF8)
        }
        guard pos + count <= bytes.count else { throw fail(.invalidUTF8) }
        guard (lo...hi).contains(bytes[pos + 1]) else { throw fail(.invalidUTF8) }
        for i in 2..<count where bytes[pos + i] & 0xC0 != 0x80 { throw fail(.invalidUTF8) }
        pos += count
    }

    mutating func parseEscape(into out: inout [UInt8]) throws(JSONError) {
        let start = pos
        pos += 1  // backslash
        guard let c = peek else { throw fail(.unexpectedEnd) }
        pos += 1
        switch c {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(c)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = UInt32(try parseHex4())
            if (0xD800...0xDBFF).contains(scalar) {
                // A high surrogate must be followed by \u and a low surrogate.
                guard pos + 1 < bytes.count, bytes[pos] == UInt8(ascii: "\\"),
                    bytes[pos + 1] == UInt8(ascii: "u")
                else { throw fail(.loneSurrogate, at: start) }
                pos += 2
                let low = UInt32(try parseHex4())
                guard (0xDC00...0xDFFF).contains(low) else { throw fail(.loneSurrogate, at: start) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail(.loneSurrogate, at: start)
            }
            guard let s = Unicode.Scalar(scalar) else { throw fail(.loneSurrogate, at: start) }
            out.append(contentsOf: s.utf8)
        default:
            throw fail(.invalidEscape, at: start)
        }
    }

    mutating func parseHex4() throws(JSONError) -> UInt16 {
        guard pos + 4 <= bytes.count else { throw fail(.unexpectedEnd) }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let b = bytes[pos]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - 0x30
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - 0x61 + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - 0x41 + 10
            default: throw fail(.invalidEscape)
            }
            v = v << 4 | UInt16(d)
            pos += 1
        }
        return v
    }
}

extension JSONValue {
    /// JSON's whitespace (RFC 8259: space, tab, line feed, carriage return), for every
    /// scanner of JSON bytes (this parser, the tokenizer.json scanner).
    @inlinable
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

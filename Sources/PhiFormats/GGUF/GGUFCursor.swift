/// Reads little-endian fields from a file image, checking every read against the bytes left
/// and naming the field when one does not fit. Nothing is allocated for a length or count
/// before it has been checked against what remains.
struct GGUFCursor {
    let bytes: UnsafeRawBufferPointer
    let path: String
    private(set) var position = 0

    init(_ bytes: UnsafeRawBufferPointer, path: String) {
        self.bytes = bytes
        self.path = path
    }

    var remaining: Int { bytes.count - position }

    mutating func skip(to offset: Int) { position = offset }

    private mutating func take(_ n: Int, _ field: @autoclosure () -> String) throws(GGUFError)
        -> Int
    {
        guard n <= remaining else {
            throw .truncated(path: path, field: field(), offset: position)
        }
        defer { position += n }
        return position
    }

    mutating func u8(_ field: @autoclosure () -> String) throws(GGUFError) -> UInt8 {
        bytes[try take(1, field())]
    }

    mutating func u16(_ field: @autoclosure () -> String) throws(GGUFError) -> UInt16 {
        UInt16(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(2, field()), as: UInt16.self))
    }

    mutating func u32(_ field: @autoclosure () -> String) throws(GGUFError) -> UInt32 {
        UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(4, field()), as: UInt32.self))
    }

    mutating func u64(_ field: @autoclosure () -> String) throws(GGUFError) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: try take(8, field()), as: UInt64.self))
    }

    /// A count of items that each take at least `minimumBytes`: refused when the file could
    /// not hold that many, so a lying count never becomes a huge allocation.
    mutating func count(
        _ field: @autoclosure () -> String, minimumBytes: Int
    ) throws(GGUFError) -> Int {
        let raw = try u64(field())
        guard raw <= UInt64(remaining / max(1, minimumBytes)) else {
            throw .countTooLarge(path: path, field: field(), count: raw, available: remaining)
        }
        return Int(raw)
    }

    /// A GGUF string (u64 length + bytes), decoded as strict UTF-8; nil if it is not UTF-8.
    mutating func string(_ field: @autoclosure () -> String) throws(GGUFError) -> String? {
        let length = try count(field() + " length", minimumBytes: 1)
        let start = try take(length, field())
        return String(
            validating: UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)]),
            as: UTF8.self)
    }
}

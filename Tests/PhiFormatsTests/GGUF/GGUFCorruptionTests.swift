import Testing

@testable import PhiFormats

/// The name of an error's case, so a table can say which case each input must produce.
private func caseName(_ e: GGUFError) -> String {
    Mirror(reflecting: e).children.first?.label ?? "\(e)"
}

private func le64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
private func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
private func header(tensors: UInt64, kvs: UInt64, version: UInt32 = 3) -> [UInt8] {
    Array("GGUF".utf8) + le32(version) + le64(tensors) + le64(kvs)
}
private func str(_ s: [UInt8]) -> [UInt8] { le64(UInt64(s.count)) + s }

/// One tensor file with its info fields spelled out, so each can be made to lie.
private func oneTensor(
    name: String = "t", dims: [UInt64] = [32], type: UInt32 = 0, offset: UInt64 = 0,
    dataBytes: Int = 128, alignment: UInt32? = nil
) -> [UInt8] {
    var out = header(tensors: 1, kvs: alignment == nil ? 0 : 1)
    if let alignment { out += str(Array("general.alignment".utf8)) + le32(4) + le32(alignment) }
    out += str(Array(name.utf8)) + le32(UInt32(dims.count))
    for d in dims { out += le64(d) }
    out += le32(type) + le64(offset)
    let align = max(1, Int(alignment ?? 32))
    out += [UInt8](repeating: 0, count: (align - out.count % align) % align)
    return out + [UInt8](repeating: 1, count: dataBytes)
}

private struct Corruption: CustomTestStringConvertible, Sendable {
    let label: String
    let bytes: [UInt8]
    let expected: String
    /// A word the message must contain (the field it names).
    let names: String
    var testDescription: String { label }
}

private let valid = sampleGGUF().bytes()

private let corruptions: [Corruption] = [
    .init(label: "empty", bytes: [], expected: "notGGUF", names: "GGUF"),
    .init(label: "wrong magic", bytes: Array("GGML".utf8) + le32(3), expected: "notGGUF", names: "GGUF"),
    .init(label: "version 1", bytes: header(tensors: 0, kvs: 0, version: 1), expected: "unsupportedVersion", names: "version 1"),
    .init(label: "big-endian", bytes: header(tensors: 0, kvs: 0, version: 0x0300_0000), expected: "unsupportedVersion", names: "version"),
    .init(label: "truncated in header", bytes: Array(valid.prefix(10)), expected: "truncated", names: "tensor count"),
    .init(label: "truncated in metadata", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(4) + [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].prefix(2), expected: "truncated", names: "'k'"),
    .init(label: "truncated value", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(10) + [1, 2], expected: "truncated", names: "'k'"),
    .init(label: "truncated in data", bytes: Array(valid.dropLast(40)), expected: "tensorPastEnd", names: "'q'"),
    .init(label: "lying tensor count", bytes: header(tensors: 1 << 60, kvs: 0), expected: "countTooLarge", names: "tensor count"),
    .init(label: "lying metadata count", bytes: header(tensors: 0, kvs: 5), expected: "countTooLarge", names: "metadata count"),
    .init(label: "huge metadata count", bytes: header(tensors: 0, kvs: UInt64.max), expected: "countTooLarge", names: "metadata count"),
    .init(label: "lying key length", bytes: header(tensors: 0, kvs: 1) + le64(UInt64.max) + [UInt8](repeating: 0x61, count: 8), expected: "countTooLarge", names: "metadata entry 0 length"),
    .init(label: "lying string length", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(8) + le64(1000) + [0x61], expected: "countTooLarge", names: "'k'"),
    .init(label: "lying array count", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(9) + le32(4) + le64(1 << 40) + le32(1), expected: "countTooLarge", names: "'k' count"),
    .init(label: "unknown value type", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(13) + [0], expected: "unknownValueType", names: "'k'"),
    .init(label: "unknown array element type", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(9) + le32(99) + le64(0), expected: "unknownValueType", names: "'k'"),
    .init(label: "bool not 0 or 1", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(7) + [2], expected: "badValue", names: "'k'"),
    .init(label: "non-UTF-8 key", bytes: header(tensors: 0, kvs: 1) + str([0xff, 0xfe]) + le32(0) + [1], expected: "keyNotUTF8", names: "entry 0"),
    .init(label: "non-UTF-8 string value", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(8) + str([0xc3]), expected: "stringNotUTF8", names: "'k'"),
    .init(label: "duplicate key", bytes: header(tensors: 0, kvs: 2) + str([0x6b]) + le32(0) + [1] + str([0x6b]) + le32(0) + [2], expected: "duplicateKey", names: "'k'"),
    .init(label: "arrays nested too deep", bytes: header(tensors: 0, kvs: 1) + str([0x6b]) + le32(9) + Array(repeating: le32(9) + le64(1), count: 9).flatMap { $0 } + le32(0) + le64(0), expected: "nestingTooDeep", names: "'k'"),
    .init(label: "alignment not a power of two", bytes: oneTensor(alignment: 24), expected: "badMetadata", names: "general.alignment"),
    .init(label: "alignment zero", bytes: oneTensor(alignment: 0), expected: "badMetadata", names: "general.alignment"),
    .init(label: "unknown tensor type", bytes: oneTensor(type: 4), expected: "unknownTensorType", names: "'t'"),
    .init(label: "zero dimensions", bytes: oneTensor(dims: []), expected: "badDimensions", names: "'t'"),
    .init(label: "five dimensions", bytes: oneTensor(dims: [1, 1, 1, 1, 1]), expected: "badDimensions", names: "'t'"),
    .init(label: "dimension over Int64", bytes: oneTensor(dims: [1, UInt64.max]), expected: "badDimensions", names: "'t'"),
    .init(label: "size overflows", bytes: oneTensor(dims: [32, 1 << 40, 1 << 40]), expected: "badDimensions", names: "overflows"),
    .init(label: "row not whole blocks", bytes: oneTensor(dims: [31], type: 2), expected: "badDimensions", names: "Q4_0"),
    .init(label: "offset past end", bytes: oneTensor(offset: 1 << 20), expected: "tensorPastEnd", names: "'t'"),
    .init(label: "offset near UInt64.max", bytes: oneTensor(offset: UInt64.max - 31), expected: "tensorPastEnd", names: "'t'"),
    .init(label: "size past end", bytes: oneTensor(dims: [64]), expected: "tensorPastEnd", names: "'t'"),
    .init(label: "misaligned data", bytes: oneTensor(offset: 4), expected: "misalignedTensor", names: "'t'"),
    .init(label: "no data section", bytes: Array(oneTensor(dataBytes: 0).prefix(60)), expected: "truncated", names: "data section"),
    .init(label: "non-UTF-8 tensor name", bytes: header(tensors: 1, kvs: 0) + str([0x80]) + [UInt8](repeating: 0, count: 24), expected: "stringNotUTF8", names: "tensor 0"),
]

@Suite struct GGUFCorruptionTests {
    @Test(arguments: corruptions)
    fileprivate func refused(_ c: Corruption) {
        do {
            _ = try parseGGUF(c.bytes)
            Issue.record("\(c.label): accepted")
        } catch {
            #expect(caseName(error) == c.expected, "\(error.message)")
            #expect(error.message.contains(c.names), "\(error.message)")
            #expect(error.exitCode == .dataError)
        }
    }

    @Test func duplicateTensorNames() {
        var b = GGUFBuilder()
        b.addTensor("w", .f32, dimensions: [1], data: [0, 0, 0, 0])
        b.addTensor("w", .f32, dimensions: [1], data: [0, 0, 0, 0])
        #expect(throws: GGUFError.duplicateTensor(path: "t.gguf", tensor: "w")) {
            try parseGGUF(b.bytes())
        }
    }

    @Test func overlappingTensors() {
        var out = header(tensors: 2, kvs: 0)
        for name in ["a", "b"] {
            out += str(Array(name.utf8)) + le32(1) + le64(8) + le32(0) + le64(0)
        }
        out += [UInt8](repeating: 0, count: (32 - out.count % 32) % 32 + 32)
        #expect(throws: GGUFError.tensorsOverlap(path: "t.gguf", tensor: "b", other: "a")) {
            try parseGGUF(out)
        }
    }

    /// Every prefix of a valid file is refused with a GGUFError, never a crash.
    @Test func everyTruncationIsAnError() {
        for n in 0..<valid.count - 1 {
            do {
                let f = try parseGGUF(Array(valid.prefix(n)))
                // Only the data's trailing padding may go: then every tensor is still whole.
                #expect(n >= valid.count - 30, "prefix \(n) accepted")
                _ = f.tensors.map { f.data($0).count }
            } catch {}
        }
    }
}

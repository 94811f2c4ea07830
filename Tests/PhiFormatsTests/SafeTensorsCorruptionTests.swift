import Foundation
import Testing

@testable import PhiFormats

/// A safetensors image: 8-byte little-endian length (or `length`), then header, then data.
func stImage(_ header: String, data: [UInt8] = [], length: UInt64? = nil) -> [UInt8] {
    stImage(Array(header.utf8), data: data, length: length)
}

func stImage(_ header: [UInt8], data: [UInt8] = [], length: UInt64? = nil) -> [UInt8] {
    let n = length ?? UInt64(header.count)
    return (0..<8).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) } + header + data
}

/// The name of an error's case, so a table can say which case each input must produce.
func stCase(_ error: SafeTensorsError) -> String {
    switch error {
    case .fileTooSmall: "fileTooSmall"
    case .headerLengthPastEnd: "headerLengthPastEnd"
    case .headerTooLarge: "headerTooLarge"
    case .headerNotUTF8: "headerNotUTF8"
    case .invalidJSON: "invalidJSON"
    case .headerNotObject: "headerNotObject"
    case .duplicateTensor: "duplicateTensor"
    case .badTensorEntry: "badTensorEntry"
    case .unknownDType: "unknownDType"
    case .badShape: "badShape"
    case .sizeMismatch: "sizeMismatch"
    case .offsetsOutOfBounds: "offsetsOutOfBounds"
    case .offsetsOverlap: "offsetsOverlap"
    case .gapBetweenTensors: "gapBetweenTensors"
    case .badMetadata: "badMetadata"
    case .writtenSizeMismatch: "writtenSizeMismatch"
    case .io: "io"
    }
}

private func f32(_ name: String, _ shape: String, _ b: Int, _ e: Int) -> String {
    #""\#(name)":{"dtype":"F32","shape":\#(shape),"data_offsets":[\#(b),\#(e)]}"#
}

private struct Corruption: CustomTestStringConvertible, Sendable {
    let label: String
    let bytes: [UInt8]
    let expected: String
    var testDescription: String { label }
}

private let eight = [UInt8](repeating: 0, count: 8)

private let corruptions: [Corruption] = [
    .init(label: "empty file", bytes: [], expected: "fileTooSmall"),
    .init(label: "7 bytes", bytes: [1, 0, 0, 0, 0, 0, 0], expected: "fileTooSmall"),
    .init(
        label: "length past end", bytes: stImage("{}", length: 100), expected: "headerLengthPastEnd"
    ),
    .init(
        label: "truncated header",
        bytes: Array(stImage("{" + f32("a", "[2]", 0, 8) + "}").dropLast(3)),
        expected: "headerLengthPastEnd"),
    .init(
        label: "length over 100 MB", bytes: stImage("{}", length: 100_000_001),
        expected: "headerTooLarge"),
    .init(
        label: "length UInt64.max", bytes: stImage("{}", length: .max), expected: "headerTooLarge"),
    .init(label: "length 2^63", bytes: stImage("{}", length: 1 << 63), expected: "headerTooLarge"),
    .init(
        label: "invalid UTF-8", bytes: stImage([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]),
        expected: "headerNotUTF8"),
    .init(
        label: "lone surrogate bytes", bytes: stImage([0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x7D]),
        expected: "headerNotUTF8"),
    .init(label: "zero-length header", bytes: stImage(""), expected: "invalidJSON"),
    .init(label: "truncated JSON", bytes: stImage(#"{"a":"#), expected: "invalidJSON"),
    .init(label: "trailing garbage", bytes: stImage("{} x"), expected: "invalidJSON"),
    .init(label: "NUL padding", bytes: stImage("{}\0\0"), expected: "invalidJSON"),
    .init(label: "array header", bytes: stImage("[]"), expected: "headerNotObject"),
    .init(label: "string header", bytes: stImage(#""x""#), expected: "headerNotObject"),
    .init(
        label: "duplicate tensor",
        bytes: stImage(
            "{" + f32("a", "[2]", 0, 8) + "," + f32("a", "[2]", 0, 8) + "}", data: eight),
        expected: "duplicateTensor"),
    .init(
        label: "duplicate field",
        bytes: stImage(
            #"{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#, data: eight),
        expected: "invalidJSON"),
    .init(label: "entry not object", bytes: stImage(#"{"a":3}"#), expected: "badTensorEntry"),
    .init(
        label: "missing dtype",
        bytes: stImage(#"{"a":{"shape":[2],"data_offsets":[0,8]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "dtype not string",
        bytes: stImage(#"{"a":{"dtype":7,"shape":[2],"data_offsets":[0,8]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "missing shape",
        bytes: stImage(#"{"a":{"dtype":"F32","data_offsets":[0,8]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "missing offsets",
        bytes: stImage(#"{"a":{"dtype":"F32","shape":[2]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "three offsets",
        bytes: stImage(#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8,8]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "float offsets",
        bytes: stImage(#"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8.0]}}"#, data: eight),
        expected: "badTensorEntry"),
    .init(
        label: "unknown dtype F4",
        bytes: stImage(#"{"a":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}}"#, data: [0]),
        expected: "unknownDType"),
    .init(
        label: "lowercase dtype",
        bytes: stImage(#"{"a":{"dtype":"f32","shape":[2],"data_offsets":[0,8]}}"#, data: eight),
        expected: "unknownDType"),
    .init(
        label: "negative dim", bytes: stImage("{" + f32("a", "[-2]", 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "float dim", bytes: stImage("{" + f32("a", "[2.0]", 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "string dim", bytes: stImage("{" + f32("a", #"["2"]"#, 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "huge dim",
        bytes: stImage("{" + f32("a", "[99999999999999999999]", 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "overflowing product",
        bytes: stImage("{" + f32("a", "[4294967296,4294967296]", 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "overflow with dtype size",
        bytes: stImage("{" + f32("a", "[4611686018427387904]", 0, 8) + "}", data: eight),
        expected: "badShape"),
    .init(
        label: "size mismatch",
        bytes: stImage("{" + f32("a", "[2]", 0, 4) + "}", data: [0, 0, 0, 0]),
        expected: "sizeMismatch"),
    .init(
        label: "scalar with zero bytes", bytes: stImage("{" + f32("a", "[]", 0, 0) + "}"),
        expected: "sizeMismatch"),
    .init(
        label: "end past data",
        bytes: stImage("{" + f32("a", "[2]", 0, 8) + "}", data: [0, 0, 0, 0]),
        expected: "offsetsOutOfBounds"),
    .init(
        label: "begin after end", bytes: stImage("{" + f32("a", "[2]", 8, 0) + "}", data: eight),
        expected: "offsetsOutOfBounds"),
    .init(
        label: "negative begin", bytes: stImage("{" + f32("a", "[1]", -4, 0) + "}", data: eight),
        expected: "offsetsOutOfBounds"),
    .init(
        label: "huge end",
        bytes: stImage(
            #"{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,99999999999999999999]}}"#,
            data: eight),
        expected: "offsetsOutOfBounds"),
    .init(
        label: "overlap",
        bytes: stImage(
            "{" + f32("a", "[2]", 0, 8) + "," + f32("b", "[2]", 4, 12) + "}",
            data: eight + [0, 0, 0, 0]),
        expected: "offsetsOverlap"),
    .init(
        label: "duplicate range",
        bytes: stImage(
            "{" + f32("a", "[2]", 0, 8) + "," + f32("b", "[2]", 0, 8) + "}", data: eight),
        expected: "offsetsOverlap"),
    .init(
        label: "empty tensor inside another",
        bytes: stImage(
            "{" + f32("a", "[2]", 0, 8) + "," + f32("b", "[0]", 4, 4) + "}", data: eight),
        expected: "offsetsOverlap"),
    .init(
        label: "gap between",
        bytes: stImage(
            "{" + f32("a", "[1]", 0, 4) + "," + f32("b", "[1]", 8, 12) + "}",
            data: eight + [0, 0, 0, 0]),
        expected: "gapBetweenTensors"),
    .init(
        label: "gap at start", bytes: stImage("{" + f32("a", "[1]", 4, 8) + "}", data: eight),
        expected: "gapBetweenTensors"),
    .init(
        label: "unused bytes at end",
        bytes: stImage("{" + f32("a", "[1]", 0, 4) + "}", data: eight),
        expected: "gapBetweenTensors"),
    .init(
        label: "data but no tensors", bytes: stImage("{}", data: [1]), expected: "gapBetweenTensors"
    ),
    .init(
        label: "metadata not object", bytes: stImage(#"{"__metadata__":[]}"#),
        expected: "badMetadata"),
    .init(
        label: "metadata number value", bytes: stImage(#"{"__metadata__":{"format":1}}"#),
        expected: "badMetadata"),
    .init(
        label: "metadata null value", bytes: stImage(#"{"__metadata__":{"format":null}}"#),
        expected: "badMetadata"),
]

@Suite struct SafeTensorsCorruptionTests {
    /// Each corrupt file must throw its own error case, through the real file path.
    @Test(arguments: corruptions)
    fileprivate func corruptFileThrowsItsCase(_ c: Corruption) throws {
        let dir = try TempDir()
        let path = try dir.write("bad.safetensors", c.bytes)
        do {
            _ = try SafeTensorsFile(path: path)
            Issue.record("\(c.label): no error")
        } catch {
            #expect(stCase(error) == c.expected, "\(c.label): \(error.message)")
            #expect(error.message.hasPrefix(path), "\(c.label): \(error.message)")
            #expect(error.exitCode == .dataError)
        }
    }

    @Test func messagesNameTheTensorAndHint() throws {
        let bytes = stImage(
            "{" + f32("model.embed_tokens.weight", "[2]", 0, 4) + "}", data: [0, 0, 0, 0])
        let error = try #require(validateError(bytes))
        #expect(
            error.message
                == "x.safetensors: tensor 'model.embed_tokens.weight' should take 8 bytes but its offsets span 4"
        )
        #expect(error.hint == "the file is truncated or corrupt; download it again")
        let dup = try #require(
            validateError(stImage("{" + f32("w", "[0]", 0, 0) + "," + f32("w", "[0]", 0, 0) + "}")))
        #expect(dup == .duplicateTensor(path: "x.safetensors", tensor: "w"))
        let json = try #require(validateError(stImage(#"{"a" 1}"#)))
        #expect(
            json
                == .invalidJSON(
                    path: "x.safetensors", offset: 5, reason: "unexpected character '1'"))
    }

    @Test func acceptedEdgeCases() throws {
        // Several empty tensors at the same offset, one at the very end, whitespace padding,
        // unknown extra fields in an entry, an empty header.
        let header =
            "{" + f32("e1", "[0]", 0, 0) + "," + f32("a", "[1]", 0, 4) + ","
            + f32("e2", "[0,5]", 4, 4)
            + "," + f32("e3", "[3,0]", 4, 4)
            + #","x":{"dtype":"U8","shape":[],"data_offsets":[4,5],"extra":[1]}"# + "}   \n\t"
        let parsed = try validate(stImage(header, data: [0, 0, 128, 63, 9]))
        #expect(parsed.tensors.map(\.name) == ["e1", "a", "e2", "e3", "x"])
        #expect(parsed.metadata == nil)
        #expect(try validate(stImage("{}")).tensors.isEmpty)
        #expect(try validate(stImage(#"{"__metadata__":{}}"#)).metadata == [:])
    }
}

private func validateError(_ bytes: [UInt8]) -> SafeTensorsError? {
    bytes.withUnsafeBytes { raw -> SafeTensorsError? in
        do throws(SafeTensorsError) {
            _ = try SafeTensorsFile.validate(raw, path: "x.safetensors")
            return nil
        } catch {
            return error
        }
    }
}

private func validate(_ bytes: [UInt8]) throws(SafeTensorsError) -> SafeTensorsFile.Header {
    let result = bytes.withUnsafeBytes { raw in
        Result { () throws(SafeTensorsError) in try SafeTensorsFile.validate(raw, path: "p") }
    }
    return try result.get()
}

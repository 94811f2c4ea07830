import Foundation
import TestSupport
import Testing

@testable import PhiFormats

/// Parses an image held in an array (the reader's `bytes:` entry point).
func parseGGUF(_ bytes: [UInt8]) throws(GGUFError) -> GGUFFile {
    // The file object points into the buffer: give it a copy that lives as long as the test.
    let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(1, bytes.count), alignment: 64)
    copy.copyBytes(from: bytes)
    return try GGUFFile(bytes: UnsafeRawBufferPointer(rebasing: copy[0..<bytes.count]), path: "t.gguf")
}

func sampleGGUF() -> GGUFBuilder {
    var b = GGUFBuilder()
    b.add("general.architecture", .string("llama"))
    b.add("u8", .uint8(200))
    b.add("i8", .int8(-3))
    b.add("u16", .uint16(65535))
    b.add("i16", .int16(-300))
    b.add("u32", .uint32(4_000_000_000))
    b.add("i32", .int32(-70000))
    b.add("u64", .uint64(UInt64.max))
    b.add("i64", .int64(Int64.min))
    b.add("f32", .float32(1.5))
    b.add("f64", .float64(-2.25))
    b.add("yes", .bool(true))
    b.add("text", .string("héllo ▁"))
    b.add("empty", .array(GGUFArray(elementType: .float32, values: [])))
    b.add(
        "nested",
        .array(
            GGUFArray(
                elementType: .array,
                values: [
                    .array(GGUFArray(elementType: .string, values: [.string("a"), .string("b")])),
                    .array(GGUFArray(elementType: .int32, values: [.int32(7)])),
                ])))
    b.addTensor("w", .f32, dimensions: [4, 2], data: (0..<32).map { UInt8($0) })
    b.addTensor("q", .q8_0, dimensions: [32], data: [UInt8](repeating: 9, count: 34))
    return b
}

@Suite struct GGUFReaderTests {
    @Test func everyValueTypeRoundTrips() throws {
        let b = sampleGGUF()
        let f = try parseGGUF(b.bytes())
        #expect(f.version == 3)
        #expect(f.metadata.map(\.key) == b.metadata.map(\.key))
        for (key, value) in b.metadata { #expect(f.value(key) == value, "\(key)") }
        #expect(f.architecture == "llama")
        #expect(f.value("nested")?.arrayValue?.values.first?.arrayValue?.strings == ["a", "b"])
    }

    @Test func tensorsAreAlignedSlices() throws {
        let f = try parseGGUF(sampleGGUF().bytes())
        let w = try #require(f.tensor("w"))
        #expect(w.type == .f32 && w.dimensions == [4, 2] && w.shape == [2, 4])
        #expect(w.byteCount == 32 && w.offset == 0 && f.dataOffset % 32 == 0)
        #expect(Array(f.data(w)) == (0..<32).map { UInt8($0) })
        let q = try #require(f.tensor("q"))
        #expect(q.offset == 32 && q.byteCount == 34 && Array(f.data(q)) == [UInt8](repeating: 9, count: 34))
    }

    @Test func customAlignmentIsHonoured() throws {
        var b = sampleGGUF()
        b.add("general.alignment", .uint32(64))
        let f = try parseGGUF(b.bytes())
        #expect(f.alignment == 64 && f.dataOffset % 64 == 0 && f.tensor("q")?.offset == 64)
    }

    @Test func readsStories260K() throws {
        let path = try TestPaths.shared("karpathy--tinyllamas/stories260K.gguf")
        let f = try GGUFFile(path: path)
        #expect(f.version == 3 && f.architecture == "llama")
        #expect(f.tensors.count == 48)
        #expect(f.value("llama.embedding_length")?.intValue == 64)
        #expect(f.value("tokenizer.ggml.tokens")?.arrayValue?.count == 512)
        let embed = try #require(f.tensor("token_embd.weight"))
        #expect(embed.shape == [512, 64] && embed.type == .f32)
    }
}

import CKernels
import Testing

@testable import PhiFormats

/// CRC-32C: the published vectors, and the SSE4.2 path (three streams joined by shift tables)
/// against the byte table on lengths, alignments and split points that cross every lane size.
@Suite struct CRC32CTests {
    /// "123456789" is the catalogue check value; the rest are RFC 3720's (iSCSI) B.4 vectors.
    @Test func publishedVectors() {
        func crc(_ bytes: [UInt8]) -> UInt32 { bytes.withUnsafeBytes { CRC32C.of($0) } }
        #expect(crc(Array("123456789".utf8)) == 0xE306_9283)
        #expect(crc([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
        #expect(crc([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(crc((0..<32).map { UInt8($0) }) == 0x46DD_794E)
        #expect(crc((0..<32).map { UInt8(31 - $0) }) == 0x113F_DB5C)
        #expect(crc([]) == 0)
    }

    @Test func fastPathMatchesTheTableOnEveryLengthAndSplit() {
        let data = xorshiftBytes(3 * 8192 * 2 + 5000, seed: 0x2545_F491_4F6C_DD1D)
        data.withUnsafeBytes { all in
            var seed: UInt64 = 7
            for length in [0, 1, 7, 8, 9, 255, 256, 767, 768, 769, 3 * 8192 - 1, 3 * 8192, 3 * 8192 + 1, all.count - 16] {
                for start in 0..<3 {
                    let piece = UnsafeRawBufferPointer(rebasing: all[start..<start + length])
                    let reference = pk_crc32c_update_ref(0, piece.baseAddress, piece.count)
                    #expect(CRC32C.of(piece) == reference, "length \(length) at \(start)")
                    // streamed in two pieces, split anywhere: the same value
                    seed = seed &* 6_364_136_223_846_793_005 &+ 1
                    let cut = length == 0 ? 0 : Int(seed >> 33) % length
                    var streamed = CRC32C()
                    streamed.update(UnsafeRawBufferPointer(rebasing: piece[..<cut]))
                    streamed.update(UnsafeRawBufferPointer(rebasing: piece[cut...]))
                    #expect(streamed.value == reference, "length \(length) cut at \(cut)")
                }
            }
        }
    }

    @Test func aFlippedBitChangesIt() {
        var data = xorshiftBytes(100_000, seed: 42)
        let before = data.withUnsafeBytes { CRC32C.of($0) }
        data[54_321] ^= 0x08
        #expect(data.withUnsafeBytes { CRC32C.of($0) } != before)
    }
}

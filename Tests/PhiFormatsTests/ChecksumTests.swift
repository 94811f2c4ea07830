import CKernels
import Foundation
import Testing

@testable import PhiFormats

private var phi35Dir: String { get throws { try SharedFixtures.phi35 } }

@Suite struct ChecksumTests {
    /// FIPS 180-2 / NIST example vectors.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func sha256Vectors(_ text: String, _ hex: String) {
        #expect(SHA256Hasher.hex(of: Array(text.utf8)) == hex)
    }

    @Test func sha256MillionA() {
        var h = SHA256Hasher()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { chunk.withUnsafeBytes { h.update($0) } }
        #expect(
            hexString(h.finalize())
                == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func streamingInPiecesEqualsOneShot() {
        let data = xorshiftBytes(10_000, seed: 0x9E37_79B9_7F4A_7C15)
        let oneShot = SHA256Hasher.hex(of: data)
        // Piece sizes straddle the 64-byte block and the 56-byte padding boundary.
        for pieces in [[1], [55, 1, 8], [63, 2], [64], [65, 127], [3, 200, 1000]] {
            var h = SHA256Hasher()
            var offset = 0
            var i = 0
            while offset < data.count {
                let n = min(pieces[i % pieces.count], data.count - offset)
                data[offset..<offset + n].withUnsafeBytes { h.update($0) }
                offset += n
                i += 1
            }
            #expect(hexString(h.finalize()) == oneShot, "pieces \(pieces)")
        }
        // Every length around the padding edge, against one-shot over the same prefix.
        for length in 50...130 {
            var h = SHA256Hasher()
            for byte in data.prefix(length) { h.update(CollectionOfOne(byte)) }
            #expect(hexString(h.finalize()) == SHA256Hasher.hex(of: data.prefix(length)))
        }
    }

    @Test func finalizeDoesNotConsumeTheHasher() {
        var h = SHA256Hasher()
        h.update(Array("ab".utf8))
        _ = h.finalize()
        h.update(Array("c".utf8))
        #expect(hexString(h.finalize()) == SHA256Hasher.hex(of: Array("abc".utf8)))
    }

    /// The SHA-NI path (when this CPU has it) against the scalar reference, block for block.
    @Test func fastBlocksMatchReference() {
        let data = xorshiftBytes(64 * 257, seed: 42)
        for blocks in [1, 2, 3, 16, 257] {
            var ref: [UInt32] = [
                0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c,
                0x1f83_d9ab, 0x5be0_cd19,
            ]
            var fast = ref
            data.withUnsafeBufferPointer { p in
                pk_sha256_blocks_ref(&ref, p.baseAddress, blocks)
                pk_sha256_blocks(&fast, p.baseAddress, blocks)
            }
            #expect(ref == fast, "\(blocks) blocks, accelerated=\(SHA256Hasher.isAccelerated)")
        }
    }

    /// Hex digests of the shared fixtures, from `sha256sum` and `git hash-object`.
    @Test(arguments: [
        (
            "config.json", "224de4f6a15b9d2a89695ec04b7f7ab2dd93a008a506979925e5a88cb5804974",
            "62d1ca8d4b3c8ab21ac9a30775e1a224be66ef58"
        ),
        (
            "generation_config.json",
            "71ff75d883319b53e16cbb8c7b61363a5138e3d342fc79dd96c2b1cb208d8ff8",
            "93dfd6366eab0bbae1613c5deab3a43bc989e5f8"
        ),
        (
            "model.safetensors.index.json",
            "6eec78ee2a442445d9d342a7cd9a763da40a49bd91d8611b7db5e9a29c90a428",
            "9d8ea7b588c536f06b274d405d1c3281cb722602"
        ),
        // An LFS file: its sha256 is the Hub's oid (PROVENANCE.md checks it against an LFS pointer).
        (
            "tokenizer.model", "9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347",
            "22bccbcb41ec929cf0c9dbe8f41036db82e5e773"
        ),
    ])
    func fixtureDigests(_ name: String, _ sha256: String, _ gitBlob: String) throws {
        let path = try phi35Dir + "/" + name
        #expect(try SHA256Hasher.hex(of: path) == sha256)
        #expect(try GitBlobSHA1.hex(of: path) == gitBlob)
        let bytes = Array(try #require(FileManager.default.contents(atPath: path)))
        #expect(GitBlobSHA1.hex(of: bytes) == gitBlob)
    }

    @Test(arguments: [
        ("", "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"),  // git hash-object /dev/null
        ("hello\n", "ce013625030ba8dba906f756967f9e9ca394464a"),
    ])
    func gitBlobVectors(_ text: String, _ hex: String) {
        #expect(GitBlobSHA1.hex(of: Array(text.utf8)) == hex)
    }

    /// A file larger than the 8 MB read size hashes like the same bytes in memory.
    @Test func largeFileAcrossReadChunks() throws {
        let data = xorshiftBytes((8 << 20) * 2 + 12345, seed: 7)
        let dir = try TempDir()
        let path = try dir.write("big.bin", data)
        var reported = 0
        #expect(
            try SHA256Hasher.hex(of: path, progress: { reported = $0 })
                == SHA256Hasher.hex(of: data))
        #expect(reported == data.count)
        #expect(try GitBlobSHA1.hex(of: path) == GitBlobSHA1.hex(of: data))
    }

    @Test func missingFileIsNoInput() {
        #expect(throws: ChecksumError.cannotOpen(path: "/nonexistent/x", errno: ENOENT)) {
            try SHA256Hasher.hex(of: "/nonexistent/x")
        }
        #expect(ChecksumError.cannotOpen(path: "/x", errno: ENOENT).exitCode == .noInput)
    }

    /// `PHIKIT_BENCH=1 swift test --filter ChecksumTests/throughput` prints MB/s.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["PHIKIT_BENCH"] != nil))
    func throughput() {
        let data = xorshiftBytes(64 << 20, seed: 3)
        for accelerated in [false, true] {
            pk_sha256_set_accelerated(accelerated ? 1 : 0)
            defer { pk_sha256_set_accelerated(1) }
            let start = ContinuousClock.now
            var h = SHA256Hasher()
            for _ in 0..<4 { data.withUnsafeBytes { h.update($0) } }
            _ = h.finalize()
            let seconds = (ContinuousClock.now - start) / .seconds(1)
            let label = accelerated && SHA256Hasher.isAccelerated ? "SHA-NI" : "scalar"
            print("sha256 \(label): \(Int(Double(4 * data.count) / 1e6 / seconds)) MB/s")
        }
        var s1 = GitBlobSHA1(size: data.count)
        let start = ContinuousClock.now
        data.withUnsafeBytes { s1.update($0) }
        _ = s1.finalize()
        print(
            "sha1 scalar: \(Int(Double(data.count) / 1e6 / ((ContinuousClock.now - start) / .seconds(1)))) MB/s"
        )
    }
}

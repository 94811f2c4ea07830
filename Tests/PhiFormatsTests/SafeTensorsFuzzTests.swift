import Testing

@testable import PhiFormats

/// xorshift64*: a fixed-seed generator so every run mutates the same way.
private struct FuzzRNG: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}

/// Bytes that make interesting header edits: JSON structure, digits, signs, big numbers.
private let tokens: [[UInt8]] = [
    "{", "}", "[", "]", ",", ":", "\"", "\\", "-", "0", "9", ".", "e", "1e400",
    "18446744073709551616", "-9223372036854775808", "null", "\"__metadata__\"",
    "\"F32\"", "\"BF16\"", "\"XX\"", "\\u0000", "\\ud800", " ",
].map { Array($0.utf8) }

/// One random edit of a whole file image (header length field included).
private func mutate(_ original: [UInt8], _ rng: inout FuzzRNG) -> [UInt8] {
    var b = original
    let headerEnd = min(b.count, 8 + Int(b[0]) + Int(b[1]) << 8)
    let edits = Int.random(in: 1...4, using: &rng)
    for _ in 0..<edits where !b.isEmpty {
        let i = Int.random(in: 0..<b.count, using: &rng)
        let j = headerEnd > 8 ? Int.random(in: 8..<headerEnd, using: &rng) : i  // a header position
        switch Int.random(in: 0..<9, using: &rng) {
        case 0: b[i] ^= UInt8(1) << UInt8.random(in: 0..<8, using: &rng)  // flip a bit anywhere
        case 1: b[min(j, b.count - 1)] = UInt8.random(in: 0...255, using: &rng)  // random header byte
        case 2: b.insert(contentsOf: tokens.randomElement(using: &rng)!, at: min(j, b.count))
        case 3:
            b.removeSubrange(min(j, b.count)..<min(j + Int.random(in: 1...6, using: &rng), b.count))
        case 4: b.removeLast(Int.random(in: 0...min(16, b.count), using: &rng))  // truncate
        case 5:
            b.append(
                contentsOf: (0..<Int.random(in: 1...9, using: &rng)).map { _ in
                    UInt8.random(in: 0...255, using: &rng)
                })
        case 6:
            b[Int.random(in: 0..<min(8, b.count), using: &rng)] = UInt8.random(
                in: 0...255, using: &rng)  // length field
        case 7:  // swap a digit for another, keeping the JSON well-formed more often
            if let k = b[8..<min(headerEnd, b.count)].indices.filter({
                (0x30...0x39).contains(b[$0])
            }).randomElement(using: &rng) {
                b[k] = UInt8.random(in: 0x30...0x39, using: &rng)
            }
        default:  // rewrite the length field to match a header that grew or shrank
            let n = UInt64(
                max(0, min(b.count, headerEnd) - 8 + Int.random(in: -3...3, using: &rng)))
            for k in 0..<min(8, b.count) { b[k] = UInt8(truncatingIfNeeded: n >> (8 * k)) }
        }
    }
    return b
}

/// Everything the reader promises about a file it accepted.
private func checkInvariants(_ h: SafeTensorsFile.Header, fileSize: Int) {
    var position = 0
    for t in h.tensors {
        #expect(t.dataOffsets.lowerBound == position)
        #expect(t.byteCount == t.elementCount * t.dtype.size)
        position = t.dataOffsets.upperBound
    }
    #expect(h.dataSectionOffset + position == fileSize)
    #expect(Set(h.tensors.map(\.name)).count == h.tensors.count)
}

@Suite struct SafeTensorsFuzzTests {
    private static func seeds() throws -> [[UInt8]] {
        var images: [[UInt8]] = []
        for name in ["dtypes.safetensors", "mlx_bf16.safetensors"] {
            let file = try MappedFile(path: try STFixtures.path(name))
            images.append(Array(file.bytes))
        }
        images.append(
            stImage(
                #"{"__metadata__":{"a":"b"},"t":{"dtype":"F16","shape":[2,1],"data_offsets":[0,4]},"s":{"dtype":"U8","shape":[],"data_offsets":[4,5]}}"#,
                data: [1, 2, 3, 4, 5]))
        return images
    }

    /// A few thousand mutated files: each must parse (and then be consistent) or throw a
    /// SafeTensorsError (the typed throw guarantees the type; the point is: no crash).
    @Test func mutatedHeadersNeverCrash() throws {
        var rng = FuzzRNG(state: 0x5EED_CAFE_F00D_0001)
        var accepted = 0
        var rejected: [String: Int] = [:]
        for seed in try Self.seeds() {
            for _ in 0..<1500 {
                let image = mutate(seed, &rng)
                image.withUnsafeBytes { raw in
                    do throws(SafeTensorsError) {
                        let h = try SafeTensorsFile.validate(raw, path: "fuzz")
                        checkInvariants(h, fileSize: raw.count)
                        accepted += 1
                    } catch {
                        rejected[stCase(error), default: 0] += 1
                        #expect(error.exitCode == .dataError)
                    }
                }
            }
        }
        // The mutations must reach deep into validation, not just fail at the first check.
        #expect(rejected.keys.count >= 8, "\(rejected)")
        #expect(accepted > 0)
    }

    /// The JSON parser on its own: random edits of a config-like text.
    @Test func mutatedJSONNeverCrashes() throws {
        let text = Array(
            #"{"a":[1,2.5e-3,{"b":null,"c":"\u00e9\ud83d\ude00"}],"d":true,"e":-0.0}"#.utf8)
        var rng = FuzzRNG(state: 42)
        for _ in 0..<3000 {
            let image = mutate([UInt8](repeating: 0, count: 8) + text, &rng).dropFirst(8)
            if let v = try? JSONValue(parsing: image) {
                #expect(try JSONValue(parsing: Array(v.serialized().utf8)) == v)
            }
        }
    }
}

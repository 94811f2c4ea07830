import CKernels
import Testing

@testable import PhiFormats

/// All 65536 16-bit patterns.
private let allHalves: [UInt16] = (0...UInt16.max).map { $0 }

/// Edge floats plus a fixed-seed random set (random bit patterns cover NaNs, subnormals, huge
/// values; the rounding-boundary neighbours of every f16 and bf16 value cover the ties).
private let floatSet: [Float] = {
    var xs: [Float] = [
        0, -0, 1, -1, .infinity, -.infinity, .nan, -.nan, .signalingNaN,
        .greatestFiniteMagnitude, -.greatestFiniteMagnitude, .leastNonzeroMagnitude,
        .leastNormalMagnitude, 65504, 65519.996, 65520, 65536, 1e-8,
        0x1p-24, 0x1p-25, 0x1.000002p-25, 0x1p-14, 0x1.ffcp-15, 0x1.ffep-15, 3.3895314e38,
    ]
    xs.append(Float(bitPattern: 0x7F80_0001))  // signalling NaN with low payload only
    xs.append(Float(bitPattern: 0xFFBF_FFFF))
    // Exact f16/bf16 values and the f32 values right at and next to the halfway points.
    for h in stride(from: 0, through: 0xFFFF, by: 7) {
        for base in [f16ToFloat(UInt16(h)).bitPattern, UInt32(h) << 16] {
            for delta: UInt32 in [0, 0xFFF, 0x1000, 0x1001, 0x7FFF, 0x8000, 0x8001] {
                xs.append(Float(bitPattern: base &+ delta))
            }
        }
    }
    var state: UInt64 = 0x1234_5678_9ABC_DEF0
    for _ in 0..<200_000 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        xs.append(Float(bitPattern: UInt32(truncatingIfNeeded: state)))
    }
    return xs
}()

@Suite struct HalfFloatTests {
    @Test func widenMatchesCKernelsOnAllHalves() {
        for (swiftConvert, ref, fast) in [
            (f16ToFloat, pk_f16_to_f32_ref, pk_f16_to_f32),
            (bf16ToFloat, pk_bf16_to_f32_ref, pk_bf16_to_f32),
        ]
            as [(
                (UInt16) -> Float,
                (UnsafeMutablePointer<Float>?, UnsafePointer<UInt16>?, Int) -> Void,
                (UnsafeMutablePointer<Float>?, UnsafePointer<UInt16>?, Int) -> Void
            )]
        {
            var a = [Float](repeating: 0, count: allHalves.count)
            var b = a
            ref(&a, allHalves, allHalves.count)
            fast(&b, allHalves, allHalves.count)
            let mismatches = allHalves.indices.filter {
                swiftConvert(allHalves[$0]).bitPattern != a[$0].bitPattern
                    || a[$0].bitPattern != b[$0].bitPattern
            }
            #expect(mismatches.isEmpty, "first mismatch at \(mismatches.first ?? -1)")
        }
    }

    @Test func narrowMatchesCKernels() {
        for (swiftConvert, ref, fast) in [
            (floatToF16, pk_f32_to_f16_ref, pk_f32_to_f16),
            (floatToBF16, pk_f32_to_bf16_ref, pk_f32_to_bf16),
        ]
            as [(
                (Float) -> UInt16,
                (UnsafeMutablePointer<UInt16>?, UnsafePointer<Float>?, Int) -> Void,
                (UnsafeMutablePointer<UInt16>?, UnsafePointer<Float>?, Int) -> Void
            )]
        {
            var a = [UInt16](repeating: 0, count: floatSet.count)
            var b = a
            ref(&a, floatSet, floatSet.count)
            fast(&b, floatSet, floatSet.count)
            let mismatches = floatSet.indices.filter {
                swiftConvert(floatSet[$0]) != a[$0] || a[$0] != b[$0]
            }
            #expect(
                mismatches.isEmpty,
                "first mismatch: \(mismatches.first.map { floatSet[$0].bitPattern } ?? 0)")
            // Odd lengths exercise the SIMD tails.
            for n in [0, 1, 7, 8, 9, 15, 16, 17, 33] {
                var tail = [UInt16](repeating: 0xAAAA, count: n + 1)
                fast(&tail, floatSet, n)
                #expect(tail[..<n].elementsEqual(a[..<n]) && tail[n] == 0xAAAA, "n = \(n)")
            }
        }
    }

    @Test func f16AgreesWithSwiftFloat16() {
        for h in allHalves where !f16ToFloat(h).isNaN {
            #expect(f16ToFloat(h) == Float(Float16(bitPattern: h)))
        }
        let mismatches = floatSet.filter { !$0.isNaN && floatToF16($0) != Float16($0).bitPattern }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(3).map(\.bitPattern))")
    }

    @Test func roundTripsEveryHalf() {
        var bad: [UInt16] = []
        for h in allHalves {
            let f16 = f16ToFloat(h)
            let bf = bf16ToFloat(h)
            // A NaN comes back with its quiet bit set and its payload kept.
            let wantF16: UInt16 = f16.isNaN ? h | 0x0200 : h
            let wantBF16: UInt16 = bf.isNaN ? h | 0x0040 : h
            if floatToF16(f16) != wantF16 || floatToBF16(bf) != wantBF16 { bad.append(h) }
        }
        #expect(bad.isEmpty, "\(bad.prefix(5))")
    }

    @Test func edgeCases() {
        #expect(floatToF16(65504) == 0x7BFF)
        #expect(floatToF16(65519.996) == 0x7BFF)
        #expect(floatToF16(65520) == 0x7C00)  // tie rounds to even → Inf
        #expect(floatToF16(-1e10) == 0xFC00)
        #expect(floatToF16(0x1p-24) == 0x0001)  // smallest subnormal
        #expect(floatToF16(0x1p-25) == 0x0000)  // tie → even (zero)
        #expect(floatToF16(0x1.000002p-25) == 0x0001)
        #expect(floatToF16(0x1.8p-24) == 0x0002)  // tie 1.5 → 2
        #expect(floatToF16(0x1.ff8p-15) == 0x03FF)  // largest subnormal
        #expect(floatToF16(0x1.ffcp-15) == 0x0400)  // tie: rounds up into the normals (even)
        #expect(floatToF16(0x1.ffap-15) == 0x03FF)
        #expect(floatToF16(-0.0) == 0x8000)
        #expect(floatToF16(.nan) & 0x7E00 == 0x7E00)
        #expect(floatToF16(Float(bitPattern: 0x7F80_0001)) == 0x7E00)  // sNaN stays NaN
        #expect(floatToBF16(Float(bitPattern: 0x7F80_0001)) == 0x7FC0)
        #expect(floatToBF16(.greatestFiniteMagnitude) == 0x7F80)  // overflows to Inf
        #expect(floatToBF16(1.00390625) == 0x3F80)  // tie → even (down)
        #expect(floatToBF16(1.01171875) == 0x3F82)  // tie → even (up)
        #expect(bf16ToFloat(0x7F81).isNaN && bf16ToFloat(0x7F81).bitPattern == 0x7FC1_0000)
        #expect(f16ToFloat(0x0001) == 0x1p-24)
        #expect(f16ToFloat(0x7C01).bitPattern == 0x7FC0_2000)
        #expect(pk_half_has_simd() == 0 || pk_half_has_simd() == 1)
    }

    /// numpy (float16) and mlx (bfloat16) conversions of the same floats, from the golden script.
    @Test func matchesNumpyAndMLX() throws {
        let expected = try STFixtures.expected()
        let pairs = try #require(expected["half_pairs"]?.arrayValue)
        #expect(pairs.count > 400)
        for pair in pairs {
            let v = pair.arrayValue?.compactMap(\.intValue) ?? []
            try #require(v.count == 3)
            let x = Float(bitPattern: UInt32(v[0]))
            #expect(floatToF16(x) == UInt16(v[1]), "f16 of \(x)")
            #expect(floatToBF16(x) == UInt16(v[2]), "bf16 of \(x)")
        }
    }

    @Test func bulkAPIs() {
        let src: [Float] = [1, -2.5, 65520, 0x1p-24, .infinity]
        var h = [UInt16](repeating: 0, count: src.count)
        var b = h
        var back = [Float](repeating: 0, count: src.count)
        src.withUnsafeBufferPointer { s in
            h.withUnsafeMutableBufferPointer { HalfConvert.f32ToF16(s, into: $0) }
            b.withUnsafeMutableBufferPointer { HalfConvert.f32ToBF16(s, into: $0) }
        }
        #expect(h == src.map(floatToF16))
        #expect(b == src.map(floatToBF16))
        h.withUnsafeBufferPointer { s in
            back.withUnsafeMutableBufferPointer { HalfConvert.f16ToF32(s, into: $0) }
        }
        #expect(back == h.map(f16ToFloat))
        b.withUnsafeBufferPointer { s in
            back.withUnsafeMutableBufferPointer { HalfConvert.bf16ToF32(s, into: $0) }
        }
        #expect(back == b.map(bf16ToFloat))
    }

    @Test(arguments: [DType.f16, .bf16])
    func widenHandlesMisalignedBytes(_ dtype: DType) {
        let n = 10_001
        let halves = (0..<n).map { UInt16(truncatingIfNeeded: $0 &* 40503) & 0x7BFF }
        let bytes = [UInt8(0)] + halves.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        var out = [Float](repeating: 0, count: n)
        bytes.withUnsafeBytes { raw in
            out.withUnsafeMutableBufferPointer {
                HalfConvert.widen(
                    UnsafeRawBufferPointer(rebasing: raw[1...]), dtype: dtype, into: $0)
            }
        }
        let convert = dtype == .f16 ? f16ToFloat : bf16ToFloat
        #expect(out == halves.map(convert))
    }
}

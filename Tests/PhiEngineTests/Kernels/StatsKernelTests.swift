import CKernels
import Foundation
import Testing

/// The tensor-statistics kernels `phikit verify` scans weights with: the AVX2/F16C versions
/// give exactly the counts, first bad index, min and max of the scalar references, on every
/// dtype, any length and alignment, fed whole or in pieces; the sum agrees to rounding.
@Suite("tensor statistics kernels")
struct StatsKernelTests {
    enum Kind: String, CaseIterable { case f32, f16, bf16, u32 }

    /// Elements of `kind` as little-endian bytes: random values salted with zeros, NaN and
    /// Inf (both signs, signalling and quiet NaN bit patterns) when `bad`.
    static func bytes(_ kind: Kind, count: Int, bad: Bool, seed: UInt64) -> [UInt8] {
        var random = KernelRandom(seed: seed)
        var out: [UInt8] = []
        for i in 0..<count {
            var value = random.float(-3, 3)
            let pick = random.next() % 50
            if pick == 0 { value = 0 }
            if pick == 1 { value = -0.0 }
            if bad && pick == 2 { value = .infinity }
            if bad && pick == 3 { value = -.infinity }
            switch kind {
            case .f32:
                var bits = value.bitPattern
                if bad && pick == 4 { bits = 0x7F80_0001 }  // signalling NaN
                if bad && pick == 5 { bits = 0xFFC0_0000 }
                out += withUnsafeBytes(of: bits.littleEndian, Array.init)
            case .f16:
                var bits = Float16(value).bitPattern
                if bad && pick == 4 { bits = 0x7C01 }
                if bad && pick == 5 { bits = 0xFE00 }
                out += withUnsafeBytes(of: bits.littleEndian, Array.init)
            case .bf16:
                var bits = UInt16(value.bitPattern >> 16)
                if bad && pick == 4 { bits = 0x7F81 }
                if bad && pick == 5 { bits = 0xFFC0 }
                out += withUnsafeBytes(of: bits.littleEndian, Array.init)
            case .u32:
                let word: UInt32 = pick < 2 ? 0 : UInt32(truncatingIfNeeded: random.next() >> 7)
                out += withUnsafeBytes(of: (word &+ UInt32(i & 1)).littleEndian, Array.init)
            }
        }
        return out
    }

    static func size(_ kind: Kind) -> Int { kind == .f32 || kind == .u32 ? 4 : 2 }

    /// Feeds `data` (elements from `offset` bytes in) to the reference or the fast kernel in
    /// pieces of `piece` elements.
    static func stats(
        _ kind: Kind, _ data: [UInt8], offset: Int, count: Int, piece: Int, fast: Bool
    ) -> pk_stats {
        var s = pk_stats()
        pk_stats_init(&s)
        data.withUnsafeBytes { raw in
            var done = 0
            while done < count {
                let n = min(piece, count - done)
                let p = raw.baseAddress! + offset + done * size(kind)
                switch (kind, fast) {
                case (.f32, false): pk_stats_f32_ref(&s, p, n)
                case (.f32, true): pk_stats_f32(&s, p, n)
                case (.f16, false): pk_stats_f16_ref(&s, p, n)
                case (.f16, true): pk_stats_f16(&s, p, n)
                case (.bf16, false): pk_stats_bf16_ref(&s, p, n)
                case (.bf16, true): pk_stats_bf16(&s, p, n)
                case (.u32, false): pk_stats_u32_ref(&s, p, n)
                case (.u32, true): pk_stats_u32(&s, p, n)
                }
                done += n
            }
        }
        return s
    }

    @Test("fast equals reference", arguments: Kind.allCases)
    func fastEqualsReference(_ kind: Kind) {
        for (count, bad, offset, piece) in [
            (0, false, 0, 8), (7, true, 1, 7), (8, false, 0, 8), (1000, true, 3, 1000),
            (1000, true, 0, 13), (4099, false, 2, 256), (4099, true, 1, 4099),
        ] {
            let data =
                [UInt8](repeating: 0, count: offset)
                + Self.bytes(kind, count: count, bad: bad, seed: UInt64(count + offset))
            let ref = Self.stats(
                kind, data, offset: offset, count: count, piece: piece, fast: false)
            let fast = Self.stats(
                kind, data, offset: offset, count: count, piece: piece, fast: true)
            let label = "\(kind) n \(count) offset \(offset) piece \(piece)"
            #expect(fast.count == ref.count && ref.count == UInt64(count), "\(label)")
            #expect(fast.nan == ref.nan, "\(label)")
            #expect(fast.inf == ref.inf, "\(label)")
            #expect(fast.zeros == ref.zeros, "\(label)")
            #expect(fast.first_bad == ref.first_bad, "\(label)")
            #expect(fast.min == ref.min && fast.max == ref.max, "\(label)")
            #expect(abs(fast.sum - ref.sum) <= 1e-9 * max(1, abs(ref.sum)) + 1e-6, "\(label)")
            if bad && count >= 1000 && kind != .u32 {
                #expect(ref.nan > 0 && ref.inf > 0 && ref.first_bad >= 0, "\(label)")
            }
        }
    }

    @Test("the reference counts what a plain Swift loop counts")
    func referenceAgainstSwift() {
        let values: [Float] = [1, -2, 0, -0.0, .nan, 3, .infinity, -.infinity, 0.5, .nan]
        var s = pk_stats()
        pk_stats_init(&s)
        values.withUnsafeBytes { pk_stats_f32_ref(&s, $0.baseAddress!, values.count) }
        let finite = values.filter(\.isFinite)
        #expect(s.count == 10 && s.nan == 2 && s.inf == 2 && s.zeros == 2)
        #expect(s.first_bad == 4)
        #expect(s.min == -2 && s.max == 3 && s.sum == Double(finite.reduce(0, +)))
    }
}

/// xoshiro256** (Blackman & Vigna), seeded through splitmix64: a small, fast generator whose
/// output depends only on the seed, so a seeded generation repeats exactly on any machine
/// and in any phikit version that keeps this file.
public struct RandomSource: Sendable {
    private var s: (UInt64, UInt64, UInt64, UInt64)

    public init(seed: UInt64) {
        var x = seed
        func splitmix() -> UInt64 {
            x &+= 0x9E37_79B9_7F4A_7C15
            var z = x
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        s = (splitmix(), splitmix(), splitmix(), splitmix())
    }

    /// Seeded from the system's random source.
    public init() {
        var system = SystemRandomNumberGenerator()
        self.init(seed: system.next())
    }

    public mutating func next() -> UInt64 {
        let result = rotate(s.1 &* 5, 7) &* 9
        let t = s.1 << 17
        s.2 ^= s.0
        s.3 ^= s.1
        s.1 ^= s.2
        s.0 ^= s.3
        s.2 ^= t
        s.3 = rotate(s.3, 45)
        return result
    }

    /// Uniform in [0, 1), 53 random bits.
    public mutating func nextUnit() -> Double { Double(next() >> 11) * 0x1p-53 }

    private func rotate(_ x: UInt64, _ k: UInt64) -> UInt64 { (x << k) | (x >> (64 - k)) }
}

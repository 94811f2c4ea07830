/// A type an option value can be converted to.
protocol ArgumentValue {
    init?(argument: String)
    /// What the user should have typed, for the error ("an integer").
    static var expected: String { get }
}

extension String: ArgumentValue {
    init?(argument: String) { self = argument }
    static var expected: String { "a string" }
}

extension Int: ArgumentValue {
    init?(argument: String) { self.init(argument) }
    static var expected: String { "an integer" }
}

extension Double: ArgumentValue {
    init?(argument: String) {
        guard let value = Double(argument), value.isFinite else { return nil }
        self = value
    }
    static var expected: String { "a number" }
}

/// A size on the command line: `5GB`, `500MB`, `1.5GiB`, `4096` (bytes). Decimal units (kB, MB,
/// GB, TB) are powers of 1000 as on the Hub; binary units (KiB, MiB, GiB, TiB) powers of 1024.
/// Case-insensitive, an optional `B`, spaces allowed between number and unit.
struct ByteSize: ArgumentValue, Equatable, Sendable {
    var bytes: Int

    init(bytes: Int) { self.bytes = bytes }

    init?(argument: String) {
        let text = argument.lowercased().filter { $0 != " " && $0 != "_" }
        let number = text.prefix { $0.isNumber || $0 == "." }
        var unit = Substring(text.dropFirst(number.count))
        if unit.hasSuffix("b") { unit = unit.dropLast() }
        let multipliers: [Substring: Double] = [
            "": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
            "ki": 1024, "mi": 1_048_576, "gi": 1_073_741_824, "ti": 1_099_511_627_776,
        ]
        guard let value = Double(number), let multiplier = multipliers[unit] else { return nil }
        let total = (value * multiplier).rounded()
        guard total >= 0, total < 9e18 else { return nil }
        bytes = Int(total)
    }

    static var expected: String { "a size such as 500MB or 5GB" }
}

/// Unicode general category and White_Space of a scalar, packed in one byte, for the split
/// patterns' classes (`\p{L}`, `\p{N}`, `\s`, …).
///
/// Low 5 bits: the general category's index in `ScalarCategory.names`; bit 5: White_Space
/// (what Oniguruma's Unicode `\s` and Rust's `char::is_whitespace` test); bit 6: Alphabetic
/// (part of `\w`). Basic Multilingual Plane scalars are looked up once each and remembered in
/// a 64 KiB table; other planes ask the standard library each time.
import Synchronization

enum ScalarCategory {
    /// Category abbreviations in table order.
    static let names: [String] = [
        "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe",
        "Pi", "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn",
    ]
    static let whitespaceBit: UInt8 = 0x20
    static let alphabeticBit: UInt8 = 0x40

    /// Bit masks over category indices, for class tests `(mask >> category) & 1`.
    static let letter: UInt32 = 0b11111  // Lu Ll Lt Lm Lo
    static let mark: UInt32 = 0b111 << 5  // Mn Mc Me
    static let number: UInt32 = 0b111 << 8  // Nd Nl No
    static let decimal: UInt32 = 1 << 8
    static let punctuation: UInt32 = 0b1111111 << 11  // Pc … Po
    static let symbol: UInt32 = 0b1111 << 18
    static let separator: UInt32 = 0b111 << 22
    static let other: UInt32 = 0b11111 << 25
    /// `\w` besides Alphabetic scalars: marks, Nd and Pc (Oniguruma's Word; Rust's regex
    /// also counts Join_Control, see `isWord`).
    static let wordCategories: UInt32 = mark | decimal | (1 << 11)

    static func mask(ofCategory name: String) -> UInt32? {
        switch name {
        case "L", "Letter": return letter
        case "M", "Mark", "Combining_Mark": return mark
        case "N", "Number": return number
        case "P", "Punctuation": return punctuation
        case "S", "Symbol": return symbol
        case "Z", "Separator": return separator
        case "C", "Other": return other
        case "L&", "LC": return 0b111
        default: return names.firstIndex(of: name).map { 1 << UInt32($0) }
        }
    }

    /// Filled in as scalars are met: computing all 65,536 categories up front would add
    /// ~10 ms to the first encode. Relaxed atomics make concurrent fills of the same cell
    /// (with the same value) well-defined.
    private static let bmp = BMPTable()

    @inline(__always)
    static func of(_ value: UInt32) -> UInt8 {
        if value < 0x10000 { return bmp.category(Int(value)) }
        guard let scalar = Unicode.Scalar(value) else { return 29 }
        return compute(scalar)
    }

    private final class BMPTable: Sendable {
        private static let unknown: UInt8 = 0xFF  // no packed value has all bits set
        nonisolated(unsafe) private let cells: UnsafeMutablePointer<Atomic<UInt8>>

        init() {
            cells = .allocate(capacity: 0x10000)
            for i in 0..<0x10000 { (cells + i).initialize(to: Atomic(Self.unknown)) }
        }

        @inline(__always)
        func category(_ index: Int) -> UInt8 {
            let cached = cells[index].load(ordering: .relaxed)
            if cached != Self.unknown { return cached }
            let value = Unicode.Scalar(UInt32(index)).map(ScalarCategory.compute) ?? 27  // Cs
            cells[index].store(value, ordering: .relaxed)
            return value
        }
    }

    private static func compute(_ scalar: Unicode.Scalar) -> UInt8 {
        let p = scalar.properties
        return index(of: p.generalCategory) | (p.isWhitespace ? whitespaceBit : 0)
            | (p.isAlphabetic ? alphabeticBit : 0)
    }

    private static func index(of category: Unicode.GeneralCategory) -> UInt8 {
        switch category {
        case .uppercaseLetter: 0
        case .lowercaseLetter: 1
        case .titlecaseLetter: 2
        case .modifierLetter: 3
        case .otherLetter: 4
        case .nonspacingMark: 5
        case .spacingMark: 6
        case .enclosingMark: 7
        case .decimalNumber: 8
        case .letterNumber: 9
        case .otherNumber: 10
        case .connectorPunctuation: 11
        case .dashPunctuation: 12
        case .openPunctuation: 13
        case .closePunctuation: 14
        case .initialPunctuation: 15
        case .finalPunctuation: 16
        case .otherPunctuation: 17
        case .mathSymbol: 18
        case .currencySymbol: 19
        case .modifierSymbol: 20
        case .otherSymbol: 21
        case .spaceSeparator: 22
        case .lineSeparator: 23
        case .paragraphSeparator: 24
        case .control: 25
        case .format: 26
        case .surrogate: 27
        case .privateUse: 28
        default: 29
        }
    }
}

/// A class test on the packed byte: category in `mask`, or White_Space when `whitespace`.
@inline(__always)
func scalarIs(_ packed: UInt8, _ mask: UInt32) -> Bool {
    (mask >> UInt32(packed & 0x1F)) & 1 != 0
}

@inline(__always)
func scalarIsWhitespace(_ packed: UInt8) -> Bool { packed & ScalarCategory.whitespaceBit != 0 }

/// Oniguruma's `\w`: Alphabetic, marks, decimal digits, connector punctuation.
@inline(__always)
func scalarIsWord(_ packed: UInt8) -> Bool {
    packed & ScalarCategory.alphabeticBit != 0 || scalarIs(packed, ScalarCategory.wordCategories)
}

/// A metadata value of a GGUF file. Arrays keep their declared element type, so an empty
/// array still says what it would hold, and nested arrays are arrays of `.array` values.
public enum GGUFValue: Sendable, Equatable {
    case uint8(UInt8)
    case int8(Int8)
    case uint16(UInt16)
    case int16(Int16)
    case uint32(UInt32)
    case int32(Int32)
    case uint64(UInt64)
    case int64(Int64)
    case float32(Float)
    case float64(Double)
    case bool(Bool)
    case string(String)
    case array(GGUFArray)

    /// The value as an integer, if it is one of the integer types and fits in `Int`.
    public var intValue: Int? {
        switch self {
        case .uint8(let v): Int(v)
        case .int8(let v): Int(v)
        case .uint16(let v): Int(v)
        case .int16(let v): Int(v)
        case .uint32(let v): Int(v)
        case .int32(let v): Int(v)
        case .uint64(let v): Int(exactly: v)
        case .int64(let v): Int(v)
        default: nil
        }
    }

    /// The value as a Double, for any number type.
    public var doubleValue: Double? {
        switch self {
        case .float32(let v): Double(v)
        case .float64(let v): v
        default: intValue.map(Double.init)
        }
    }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: GGUFArray? { if case .array(let a) = self { a } else { nil } }

    /// The GGUF type name (`uint32`, `string`, `array`), for listings and errors.
    public var typeName: String {
        switch self {
        case .uint8: "uint8"
        case .int8: "int8"
        case .uint16: "uint16"
        case .int16: "int16"
        case .uint32: "uint32"
        case .int32: "int32"
        case .uint64: "uint64"
        case .int64: "int64"
        case .float32: "float32"
        case .float64: "float64"
        case .bool: "bool"
        case .string: "string"
        case .array(let a): "array[\(a.elementType.name)]"
        }
    }
}

/// A GGUF metadata array: its declared element type and its values.
public struct GGUFArray: Sendable, Equatable {
    public var elementType: GGUFValueType
    public var values: [GGUFValue]

    public init(elementType: GGUFValueType, values: [GGUFValue]) {
        self.elementType = elementType
        self.values = values
    }

    public var count: Int { values.count }
    /// Every element as a string / number, or nil if any one is not.
    public var strings: [String]? { all(\.stringValue) }
    public var doubles: [Double]? { all(\.doubleValue) }
    public var ints: [Int]? { all(\.intValue) }

    private func all<T>(_ element: (GGUFValue) -> T?) -> [T]? {
        var out: [T] = []
        out.reserveCapacity(values.count)
        for v in values {
            guard let e = element(v) else { return nil }
            out.append(e)
        }
        return out
    }
}

/// The value type codes of the GGUF format (`gguf_type`).
public enum GGUFValueType: UInt32, Sendable, CaseIterable {
    case uint8 = 0
    case int8 = 1
    case uint16 = 2
    case int16 = 3
    case uint32 = 4
    case int32 = 5
    case float32 = 6
    case bool = 7
    case string = 8
    case array = 9
    case uint64 = 10
    case int64 = 11
    case float64 = 12

    public var name: String { String(describing: self) }

    /// The fewest bytes one value of this type can take in a file: what bounds an array's
    /// count by the bytes left, before anything is allocated for it.
    var minimumBytes: Int {
        switch self {
        case .uint8, .int8, .bool: 1
        case .uint16, .int16: 2
        case .uint32, .int32, .float32: 4
        case .uint64, .int64, .float64, .string: 8  // a string is at least its length
        case .array: 12  // element type + count
        }
    }
}

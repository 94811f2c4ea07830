/// Element types of safetensors files, spelled as the format spells them.
/// F8 types are carried as opaque data (read, copied, never computed on).
public enum DType: String, CaseIterable, Sendable, Codable {
    case f64 = "F64"
    case f32 = "F32"
    case f16 = "F16"
    case bf16 = "BF16"
    case i64 = "I64"
    case i32 = "I32"
    case i16 = "I16"
    case i8 = "I8"
    case u64 = "U64"
    case u32 = "U32"
    case u16 = "U16"
    case u8 = "U8"
    case bool = "BOOL"
    case f8e4m3 = "F8_E4M3"
    case f8e5m2 = "F8_E5M2"

    /// Bytes per element.
    public var size: Int {
        switch self {
        case .f64, .i64, .u64: 8
        case .f32, .i32, .u32: 4
        case .f16, .bf16, .i16, .u16: 2
        case .i8, .u8, .bool, .f8e4m3, .f8e5m2: 1
        }
    }

    /// Floating-point types phikit computes on (converts, quantizes).
    public var isFloat: Bool { self == .f32 || self == .f16 || self == .bf16 || self == .f64 }

    /// The name mlx / numpy / torch users know (`--dtype float16`, config `torch_dtype`).
    public var pythonName: String {
        switch self {
        case .f64: "float64"
        case .f32: "float32"
        case .f16: "float16"
        case .bf16: "bfloat16"
        case .i64: "int64"
        case .i32: "int32"
        case .i16: "int16"
        case .i8: "int8"
        case .u64: "uint64"
        case .u32: "uint32"
        case .u16: "uint16"
        case .u8: "uint8"
        case .bool: "bool"
        case .f8e4m3: "float8_e4m3fn"
        case .f8e5m2: "float8_e5m2"
        }
    }

    /// Parses `float16`, `bfloat16`, `float32` (and the safetensors spellings).
    public init?(pythonName name: String) {
        guard
            let match = DType.allCases.first(where: { $0.pythonName == name || $0.rawValue == name }
            )
        else { return nil }
        self = match
    }
}

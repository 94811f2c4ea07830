/// The tensor element types of a GGUF file (ggml's `enum ggml_type`), with the block geometry
/// the reader needs to size a tensor. Numbers that ggml retired (4, 5, 31–33) are unknown.
public enum GGMLType: UInt32, CaseIterable, Sendable, Codable {
    case f32 = 0
    case f16 = 1
    case q4_0 = 2
    case q4_1 = 3
    case q5_0 = 6
    case q5_1 = 7
    case q8_0 = 8
    case q8_1 = 9
    case q2_K = 10
    case q3_K = 11
    case q4_K = 12
    case q5_K = 13
    case q6_K = 14
    case q8_K = 15
    case iq2_XXS = 16
    case iq2_XS = 17
    case iq3_XXS = 18
    case iq1_S = 19
    case iq4_NL = 20
    case iq3_S = 21
    case iq2_S = 22
    case iq4_XS = 23
    case i8 = 24
    case i16 = 25
    case i32 = 26
    case i64 = 27
    case f64 = 28
    case iq1_M = 29
    case bf16 = 30
    case tq1_0 = 34
    case tq2_0 = 35
    case mxfp4 = 39
    case nvfp4 = 40
    case q1_0 = 41

    /// Values per block (1 for plain element types).
    public var blockSize: Int {
        switch self {
        case .f32, .f16, .bf16, .f64, .i8, .i16, .i32, .i64: 1
        case .q4_0, .q4_1, .q5_0, .q5_1, .q8_0, .q8_1, .iq4_NL, .mxfp4: 32
        case .nvfp4: 64
        case .q1_0: 128
        default: 256
        }
    }

    /// Bytes per block (ggml's `type_size`; the numbers of gguf-py's GGML_QUANT_SIZES).
    public var blockBytes: Int {
        switch self {
        case .f32, .i32: 4
        case .f16, .bf16, .i16: 2
        case .f64, .i64: 8
        case .i8: 1
        case .q4_0: 18
        case .q4_1: 20
        case .q5_0: 22
        case .q5_1: 24
        case .q8_0: 34
        case .q8_1: 40
        case .q2_K: 84
        case .q3_K: 110
        case .q4_K: 144
        case .q5_K: 176
        case .q6_K: 210
        case .q8_K: 292
        case .iq2_XXS: 66
        case .iq2_XS: 74
        case .iq3_XXS: 98
        case .iq1_S: 50
        case .iq4_NL: 18
        case .iq3_S: 110
        case .iq2_S: 82
        case .iq4_XS: 136
        case .iq1_M: 56
        case .tq1_0: 54
        case .tq2_0: 66
        case .mxfp4: 17
        case .nvfp4: 36
        case .q1_0: 18
        }
    }

    /// The name llama.cpp prints (`Q4_K`, `F16`, `IQ2_XXS`).
    public var name: String { String(describing: self).uppercased() }

    /// Bytes of a row of `count` values, or nil when `count` is not a whole number of blocks
    /// or the size overflows.
    public func rowBytes(_ count: Int) -> Int? {
        guard count >= 0, count % blockSize == 0 else { return nil }
        let (bytes, overflow) = (count / blockSize).multipliedReportingOverflow(by: blockBytes)
        return overflow ? nil : bytes
    }
}

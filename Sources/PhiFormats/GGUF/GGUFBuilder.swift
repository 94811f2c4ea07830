/// Builds a GGUF v3 file image in memory: metadata, then tensor infos, then aligned data.
/// For tests and small tools (corrupt-file tables, fuzz seeds, synthetic models); a model
/// of real size is written by llama.cpp, not by this.
public struct GGUFBuilder: Sendable {
    public var version: UInt32 = 3
    public var metadata: [(key: String, value: GGUFValue)] = []
    public var tensors: [(name: String, type: GGMLType, dimensions: [Int], data: [UInt8])] = []

    public init() {}

    public mutating func add(_ key: String, _ value: GGUFValue) {
        metadata.append((key, value))
    }

    /// `dimensions` in ggml order (columns first); `data` must be the tensor's exact bytes.
    public mutating func addTensor(
        _ name: String, _ type: GGMLType, dimensions: [Int], data: [UInt8]
    ) {
        tensors.append((name, type, dimensions, data))
    }

    /// The alignment `general.alignment` sets (default 32).
    public var alignment: Int {
        if let v = metadata.last(where: { $0.key == "general.alignment" })?.value.intValue,
            v > 0
        {
            return v
        }
        return GGUFFile.defaultAlignment
    }

    public func bytes() -> [UInt8] {
        var out: [UInt8] = Array("GGUF".utf8)
        Self.put(version, &out)
        Self.put(UInt64(tensors.count), &out)
        Self.put(UInt64(metadata.count), &out)
        for (key, value) in metadata {
            Self.putString(key, &out)
            Self.put(Self.typeCode(value).rawValue, &out)
            Self.putValue(value, &out)
        }
        let align = alignment
        var offsets: [Int] = []
        var position = 0
        for t in tensors {
            offsets.append(position)
            position += (t.data.count + align - 1) / align * align
        }
        for (t, offset) in zip(tensors, offsets) {
            Self.putString(t.name, &out)
            Self.put(UInt32(t.dimensions.count), &out)
            for d in t.dimensions { Self.put(UInt64(d), &out) }
            Self.put(t.type.rawValue, &out)
            Self.put(UInt64(offset), &out)
        }
        out += [UInt8](repeating: 0, count: (align - out.count % align) % align)
        for t in tensors {
            out += t.data
            out += [UInt8](repeating: 0, count: (align - t.data.count % align) % align)
        }
        return out
    }

    static func typeCode(_ v: GGUFValue) -> GGUFValueType {
        switch v {
        case .uint8: .uint8
        case .int8: .int8
        case .uint16: .uint16
        case .int16: .int16
        case .uint32: .uint32
        case .int32: .int32
        case .uint64: .uint64
        case .int64: .int64
        case .float32: .float32
        case .float64: .float64
        case .bool: .bool
        case .string: .string
        case .array: .array
        }
    }

    static func put<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out += $0 }
    }

    static func putString(_ s: String, _ out: inout [UInt8]) {
        put(UInt64(s.utf8.count), &out)
        out += Array(s.utf8)
    }

    static func putValue(_ v: GGUFValue, _ out: inout [UInt8]) {
        switch v {
        case .uint8(let x): put(x, &out)
        case .int8(let x): put(x, &out)
        case .uint16(let x): put(x, &out)
        case .int16(let x): put(x, &out)
        case .uint32(let x): put(x, &out)
        case .int32(let x): put(x, &out)
        case .uint64(let x): put(x, &out)
        case .int64(let x): put(x, &out)
        case .float32(let x): put(x.bitPattern, &out)
        case .float64(let x): put(x.bitPattern, &out)
        case .bool(let x): out.append(x ? 1 : 0)
        case .string(let s): putString(s, &out)
        case .array(let a):
            put(a.elementType.rawValue, &out)
            put(UInt64(a.values.count), &out)
            for e in a.values { putValue(e, &out) }
        }
    }
}

/// One tensor's entry in a GGUF file, validated.
public struct GGUFTensorInfo: Sendable, Equatable {
    public let name: String
    public let type: GGMLType
    /// ggml's `ne`: the fastest-varying dimension first (`[columns, rows]` for a matrix).
    public let dimensions: [Int]
    /// Offset of the data from the start of the data section.
    public let offset: Int
    public let byteCount: Int

    /// Row-major shape as safetensors and numpy write it: `dimensions` reversed.
    public var shape: [Int] { dimensions.reversed() }
    public var elementCount: Int { dimensions.reduce(1, *) }
}

/// A memory-mapped GGUF file (versions 2 and 3, little-endian): header, metadata, tensor
/// infos and data.
///
/// `init` validates everything before any tensor is handed out: each count and length
/// against the bytes left, every value type, UTF-8 keys and strings, unique keys and tensor
/// names, dimensions (count, sign, block multiples, overflow), alignment and that each
/// tensor's bytes lie inside the data section without overlapping another. After that,
/// `data(_:)` is a plain zero-copy slice of the mapping.
public final class GGUFFile: @unchecked Sendable {  // immutable after init
    /// ggml's GGML_MAX_DIMS.
    public static let maxDimensions = 4
    /// Arrays of arrays deeper than this are refused (real files nest at most once).
    public static let maxArrayDepth = 8
    /// ggml's GGUF_DEFAULT_ALIGNMENT, used when `general.alignment` is absent.
    public static let defaultAlignment = 32

    public let path: String
    public let version: UInt32
    /// Metadata in file order.
    public let metadata: [(key: String, value: GGUFValue)]
    /// Tensors in file (tensor-info) order.
    public let tensors: [GGUFTensorInfo]
    public let alignment: Int
    /// Byte offset of the data section in the file.
    public let dataOffset: Int

    private let file: MappedFile?
    private let image: UnsafeRawBufferPointer
    private let valueIndex: [String: Int]
    private let tensorIndex: [String: Int]

    public convenience init(path: String) throws(GGUFError) {
        let file: MappedFile
        do { file = try MappedFile(path: path) } catch { throw .io(error) }
        try self.init(file: file, image: file.bytes, path: path)
    }

    /// Parses a file image held by the caller (tests and the fuzzer); `bytes` must outlive
    /// the object.
    public convenience init(bytes: UnsafeRawBufferPointer, path: String) throws(GGUFError) {
        try self.init(file: nil, image: bytes, path: path)
    }

    private init(file: MappedFile?, image: UnsafeRawBufferPointer, path: String) throws(GGUFError)
    {
        self.file = file
        self.image = image
        self.path = path
        var cursor = GGUFCursor(image, path: path)
        guard image.count >= 4, image[0] == 0x47, image[1] == 0x47, image[2] == 0x55,
            image[3] == 0x46
        else { throw .notGGUF(path: path) }
        cursor.skip(to: 4)
        version = try cursor.u32("version")
        guard version == 2 || version == 3 else {
            throw .unsupportedVersion(path: path, version: version)
        }
        // Each tensor info takes at least 24 bytes (name length, dims count, type, offset),
        // each metadata entry at least 13 (key length, type, one byte of value).
        let tensorCount = try cursor.count("tensor count", minimumBytes: 24)
        let kvCount = try cursor.count("metadata count", minimumBytes: 13)

        var metadata: [(key: String, value: GGUFValue)] = []
        var valueIndex: [String: Int] = [:]
        for index in 0..<kvCount {
            guard let key = try cursor.string("key of metadata entry \(index)") else {
                throw .keyNotUTF8(path: path, index: index)
            }
            guard valueIndex[key] == nil else { throw .duplicateKey(path: path, key: key) }
            let field = "value of '\(key)'"
            let rawType = try cursor.u32("type of '\(key)'")
            guard let type = GGUFValueType(rawValue: rawType) else {
                throw .unknownValueType(path: path, field: field, type: rawType)
            }
            let value = try Self.value(type, &cursor, field: field, depth: 0)
            valueIndex[key] = metadata.count
            metadata.append((key, value))
        }
        self.metadata = metadata
        self.valueIndex = valueIndex

        alignment = try Self.alignment(valueIndex, metadata, path: path)

        var infos: [(name: String, type: GGMLType, dims: [Int], offset: UInt64, bytes: Int)] = []
        infos.reserveCapacity(tensorCount)
        var tensorIndex: [String: Int] = [:]
        for index in 0..<tensorCount {
            guard let name = try cursor.string("name of tensor \(index)") else {
                throw .stringNotUTF8(path: path, field: "the name of tensor \(index)")
            }
            guard tensorIndex[name] == nil else {
                throw .duplicateTensor(path: path, tensor: name)
            }
            let dimCount = try cursor.u32("dimension count of tensor '\(name)'")
            guard dimCount >= 1, dimCount <= UInt32(Self.maxDimensions) else {
                throw .badDimensions(
                    path: path, tensor: name,
                    reason: "\(dimCount) dimensions (1 to \(Self.maxDimensions) allowed)")
            }
            var dims: [Int] = []
            for _ in 0..<dimCount {
                let d = try cursor.u64("dimensions of tensor '\(name)'")
                guard d <= UInt64(Int64.max) else {
                    throw .badDimensions(path: path, tensor: name, reason: "\(d) is too large")
                }
                dims.append(Int(d))
            }
            let rawType = try cursor.u32("type of tensor '\(name)'")
            guard let type = GGMLType(rawValue: rawType) else {
                throw .unknownTensorType(path: path, tensor: name, type: rawType)
            }
            let offset = try cursor.u64("data offset of tensor '\(name)'")
            let bytes = try Self.byteCount(dims, type, name: name, path: path)
            tensorIndex[name] = infos.count
            infos.append((name, type, dims, offset, bytes))
        }
        self.tensorIndex = tensorIndex

        // The data section starts at the next multiple of the alignment.
        let headerEnd = cursor.position
        let padded = (headerEnd + alignment - 1) / alignment * alignment
        guard padded <= image.count || tensorCount == 0 else {
            throw .truncated(path: path, field: "data section", offset: headerEnd)
        }
        dataOffset = min(padded, image.count)
        let dataSize = image.count - dataOffset

        var tensors: [GGUFTensorInfo] = []
        tensors.reserveCapacity(infos.count)
        for info in infos {
            guard info.offset % UInt64(alignment) == 0 else {
                throw .misalignedTensor(
                    path: path, tensor: info.name, offset: info.offset, alignment: alignment)
            }
            guard info.offset <= UInt64(dataSize), info.bytes <= dataSize - Int(info.offset)
            else {
                throw .tensorPastEnd(
                    path: path, tensor: info.name, offset: info.offset, size: info.bytes,
                    dataSize: dataSize)
            }
            tensors.append(
                GGUFTensorInfo(
                    name: info.name, type: info.type, dimensions: info.dims,
                    offset: Int(info.offset), byteCount: info.bytes))
        }
        try Self.checkNoOverlap(tensors, path: path)
        self.tensors = tensors
    }

    // MARK: - Access

    public func value(_ key: String) -> GGUFValue? { valueIndex[key].map { metadata[$0].value } }

    public func tensor(_ name: String) -> GGUFTensorInfo? {
        tensorIndex[name].map { tensors[$0] }
    }

    /// The tensor's bytes, straight from the mapping (not necessarily aligned to anything
    /// beyond `alignment` from the start of the file). Valid while this object is alive.
    public func data(_ t: GGUFTensorInfo) -> UnsafeRawBufferPointer {
        let start = dataOffset + t.offset
        precondition(start + t.byteCount <= image.count, "tensor '\(t.name)' is not from \(path)")
        return UnsafeRawBufferPointer(rebasing: image[start..<(start + t.byteCount)])
    }

    /// Lets the kernel drop the tensor's pages once a streaming convert is done with it.
    public func release(_ t: GGUFTensorInfo) {
        file?.dropPages((dataOffset + t.offset)..<(dataOffset + t.offset + t.byteCount))
    }

    public var fileSize: Int { image.count }

    /// `general.architecture`, if it is a string.
    public var architecture: String? { value("general.architecture")?.stringValue }

    // MARK: - Parsing pieces

    private static func value(
        _ type: GGUFValueType, _ c: inout GGUFCursor, field: String, depth: Int
    ) throws(GGUFError) -> GGUFValue {
        switch type {
        case .uint8: return .uint8(try c.u8(field))
        case .int8: return .int8(Int8(bitPattern: try c.u8(field)))
        case .uint16: return .uint16(try c.u16(field))
        case .int16: return .int16(Int16(bitPattern: try c.u16(field)))
        case .uint32: return .uint32(try c.u32(field))
        case .int32: return .int32(Int32(bitPattern: try c.u32(field)))
        case .uint64: return .uint64(try c.u64(field))
        case .int64: return .int64(Int64(bitPattern: try c.u64(field)))
        case .float32: return .float32(Float(bitPattern: try c.u32(field)))
        case .float64: return .float64(Double(bitPattern: try c.u64(field)))
        case .bool:
            let b = try c.u8(field)
            guard b <= 1 else {
                throw .badValue(path: c.path, field: field, reason: "is a bool of value \(b)")
            }
            return .bool(b == 1)
        case .string:
            guard let s = try c.string(field) else {
                throw .stringNotUTF8(path: c.path, field: field)
            }
            return .string(s)
        case .array:
            guard depth < maxArrayDepth else { throw .nestingTooDeep(path: c.path, field: field) }
            let rawType = try c.u32(field + " element type")
            guard let elementType = GGUFValueType(rawValue: rawType) else {
                throw .unknownValueType(path: c.path, field: field + " element", type: rawType)
            }
            let n = try c.count(field + " count", minimumBytes: elementType.minimumBytes)
            var values: [GGUFValue] = []
            values.reserveCapacity(n)
            for i in 0..<n {
                values.append(try value(elementType, &c, field: "\(field)[\(i)]", depth: depth + 1))
            }
            return .array(GGUFArray(elementType: elementType, values: values))
        }
    }

    /// `general.alignment`: a non-zero power of two in a uint32 (as ggml requires).
    private static func alignment(
        _ index: [String: Int], _ metadata: [(key: String, value: GGUFValue)], path: String
    ) throws(GGUFError) -> Int {
        let key = "general.alignment"
        guard let i = index[key] else { return defaultAlignment }
        guard case .uint32(let a) = metadata[i].value else {
            throw .badMetadata(
                path: path, key: key, reason: "is a \(metadata[i].value.typeName), not a uint32")
        }
        guard a > 0, a & (a - 1) == 0 else {
            throw .badMetadata(path: path, key: key, reason: "is \(a), not a power of two")
        }
        return Int(a)
    }

    /// Bytes of a tensor: every dimension a whole number, the first a multiple of the block
    /// size, the product not overflowing.
    private static func byteCount(
        _ dims: [Int], _ type: GGMLType, name: String, path: String
    ) throws(GGUFError) -> Int {
        guard dims[0] % type.blockSize == 0, let rowBytes = type.rowBytes(dims[0]) else {
            throw .badDimensions(
                path: path, tensor: name,
                reason: "\(dims[0]) values per row is not a multiple of \(type.name)'s block "
                    + "of \(type.blockSize)")
        }
        var bytes = rowBytes
        var elements = dims[0]
        for d in dims.dropFirst() {
            let (b, o1) = bytes.multipliedReportingOverflow(by: d)
            let (e, o2) = elements.multipliedReportingOverflow(by: d)
            guard !o1, !o2 else {
                throw .badDimensions(path: path, tensor: name, reason: "size overflows")
            }
            (bytes, elements) = (b, e)
        }
        return bytes
    }

    private static func checkNoOverlap(
        _ tensors: [GGUFTensorInfo], path: String
    ) throws(GGUFError) {
        let sorted = tensors.filter { $0.byteCount > 0 }.sorted {
            ($0.offset, $0.byteCount) < ($1.offset, $1.byteCount)
        }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.offset + a.byteCount > b.offset {
            throw .tensorsOverlap(path: path, tensor: b.name, other: a.name)
        }
    }
}

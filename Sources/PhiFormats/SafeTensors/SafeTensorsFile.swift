/// One tensor's entry in a safetensors header, validated.
public struct TensorInfo: Sendable, Equatable {
    public let name: String
    public let dtype: DType
    public let shape: [Int]
    /// Byte range relative to the start of the data section (as in the header).
    public let dataOffsets: Range<Int>

    public init(name: String, dtype: DType, shape: [Int], dataOffsets: Range<Int>) {
        self.name = name
        self.dtype = dtype
        self.shape = shape
        self.dataOffsets = dataOffsets
    }

    /// Product of the shape (1 for a scalar `[]`, 0 if any dimension is 0).
    public var elementCount: Int { shape.reduce(1, *) }
    public var byteCount: Int { dataOffsets.count }
}

/// A .safetensors file (8-byte little-endian header length, JSON header, data), memory-mapped
/// or read into memory (`init(residentCopyOf:)`).
///
/// `init` validates everything a reader could trip over — header length, UTF-8, JSON, every
/// dtype, shape and offset, and that the tensors tile the data section exactly — so afterwards
/// `data(_:)` is a plain, zero-copy slice of the file's image.
public final class SafeTensorsFile: @unchecked Sendable {  // immutable after init
    /// The largest header accepted, as in the safetensors library.
    public static let maxHeaderSize = 100_000_000

    public let path: String
    /// All tensors, ordered by data offset (ties, i.e. empty tensors, in header order).
    public let tensors: [TensorInfo]
    /// The `__metadata__` map, if the header has one.
    public let metadata: [String: String]?
    /// Byte offset of the data section in the file (8 + header length).
    public let dataSectionOffset: Int

    /// Where the bytes are: the file mapped (paged in on demand, pages the kernel may drop), or
    /// a resident copy placed for the kernels.
    private enum Image {
        case mapped(MappedFile)
        case resident(ResidentFile)
    }
    private let image: Image
    private let bytes: UnsafeRawBufferPointer
    private let indexByName: [String: Int]

    /// `hugePages`: mapped in 2 MiB pages where the kernel can (`MappedFile`), for a model
    /// about to run.
    public convenience init(path: String, hugePages: Bool = false) throws(SafeTensorsError) {
        let file: MappedFile
        do {
            file = try MappedFile(path: path, hugePages: hugePages)
        } catch {
            throw .io(error)
        }
        try self.init(path: path, image: .mapped(file), bytes: file.bytes)
    }

    /// The file read whole into anonymous 2 MiB pages with its data section on a 64-byte line
    /// (`ResidentFile`), so every tensor whose offset is a multiple of 64 (all of them in the
    /// files mlx writes) starts on a line: the 4-bit prompt kernels' 64-byte weight loads then
    /// never split one. Throws `SafeTensorsError` (`.io` for a failed read) or `Interrupted`.
    public convenience init(residentCopyOf path: String, cancellation: CancellationToken? = nil)
        throws
    {
        let file: ResidentFile
        do {
            file = try ResidentFile(
                path: path, alignedOffset: Self.dataSectionOffset(head:), cancellation: cancellation)
        } catch let error as FileError {
            throw SafeTensorsError.io(error)
        }
        try self.init(path: path, image: .resident(file), bytes: file.bytes)
    }

    /// Mapped in 2 MiB pages and faulted in whole now (`MappedFile.populate`); if the page
    /// cache gave less than `minimumHugePageShare` of the file 2 MiB pages, a resident copy
    /// is made from that mapping instead (`init(residentCopyOf:)`), and the mapping let go.
    /// Throws as those two do.
    public convenience init(
        mappedOrResidentCopyOf path: String, minimumHugePageShare: Double = 0.95,
        cancellation: CancellationToken? = nil
    ) throws {
        let file: MappedFile
        let share: Double?
        do {
            file = try MappedFile(path: path, hugePages: true)
            share = try file.populate(cancellation: cancellation)
        } catch let error as FileError {
            throw SafeTensorsError.io(error)
        }
        guard let share, share < minimumHugePageShare else {
            try self.init(path: path, image: .mapped(file), bytes: file.bytes)
            return
        }
        let copy: ResidentFile
        do {
            copy = try ResidentFile(
                copyOf: file, alignedOffset: Self.dataSectionOffset(head:), cancellation: cancellation)
        } catch let error as FileError {
            throw SafeTensorsError.io(error)
        }
        try self.init(path: path, image: .resident(copy), bytes: copy.bytes)
    }

    private init(path: String, image: Image, bytes: UnsafeRawBufferPointer)
        throws(SafeTensorsError)
    {
        self.path = path
        self.image = image
        self.bytes = bytes
        let header = try SafeTensorsFile.validate(bytes, path: path)
        tensors = header.tensors
        metadata = header.metadata
        dataSectionOffset = header.dataSectionOffset
        indexByName = Dictionary(
            tensors.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// 8 + the header length the first 8 bytes declare (0 when they cannot be one: the
    /// validation that follows the read names the problem).
    static func dataSectionOffset(head: [UInt8]) -> Int {
        guard head.count == 8 else { return 0 }
        let length = head.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return length <= UInt64(maxHeaderSize) ? 8 + Int(length) : 0
    }

    /// Whether the tensors are a resident copy (`init(residentCopyOf:)`), not a mapping.
    public var isResident: Bool {
        if case .resident = image { return true }
        return false
    }

    public func info(_ name: String) -> TensorInfo? {
        indexByName[name].map { tensors[$0] }
    }

    /// The tensor's bytes, straight from the file's image (little-endian; aligned only in a
    /// resident copy). Valid while this object is alive.
    public func data(_ t: TensorInfo) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[absoluteRange(t)])
    }

    /// Lets the kernel drop the tensor's pages (a streaming convert calls this after each one).
    /// A resident copy keeps its bytes: they are not the file's pages.
    public func release(_ t: TensorInfo) {
        if case .mapped(let file) = image { file.dropPages(absoluteRange(t)) }
    }

    /// Asks the kernel to start reading the tensor's pages ahead of use (a resident copy has
    /// read them all).
    public func willNeed(_ t: TensorInfo) {
        if case .mapped(let file) = image { file.willNeed(absoluteRange(t)) }
    }

    /// Size of the whole file in bytes (as read, for a resident copy).
    public var fileSize: Int { bytes.count }

    private func absoluteRange(_ t: TensorInfo) -> Range<Int> {
        let lower = dataSectionOffset + t.dataOffsets.lowerBound
        let upper = dataSectionOffset + t.dataOffsets.upperBound
        precondition(upper <= bytes.count, "tensor '\(t.name)' is not from \(path)")
        return lower..<upper
    }
}

// MARK: - Validation

extension SafeTensorsFile {
    struct Header {
        var tensors: [TensorInfo]
        var metadata: [String: String]?
        var dataSectionOffset: Int
    }

    /// Checks a whole file image and returns its tensors. Internal so tests can fuzz it
    /// without going through the file system.
    static func validate(
        _ bytes: UnsafeRawBufferPointer, path: String
    ) throws(SafeTensorsError) -> Header {
        guard bytes.count >= 8 else { throw .fileTooSmall(path: path, size: bytes.count) }
        var length: UInt64 = 0
        for i in (0..<8).reversed() { length = length << 8 | UInt64(bytes[i]) }
        // Compare in UInt64 first: the length may not fit in an Int.
        guard length <= UInt64(maxHeaderSize) else {
            throw .headerTooLarge(path: path, headerLength: length)
        }
        guard length <= UInt64(bytes.count - 8) else {
            throw .headerLengthPastEnd(path: path, headerLength: length, fileSize: bytes.count)
        }
        let headerEnd = 8 + Int(length)
        let headerBytes = UnsafeRawBufferPointer(rebasing: bytes[8..<headerEnd])
        guard String(validating: headerBytes, as: UTF8.self) != nil else {
            throw .headerNotUTF8(path: path)
        }

        let json: JSONValue
        do {
            json = try JSONValue(parsing: headerBytes)
        } catch {
            if case .duplicateKey(let name) = error.kind, error.depth == 1 {
                throw .duplicateTensor(path: path, tensor: name)
            }
            throw .invalidJSON(path: path, offset: error.offset, reason: error.reason)
        }
        guard case .object(let members) = json else { throw .headerNotObject(path: path) }

        let dataSize = bytes.count - headerEnd
        var metadata: [String: String]?
        var entries: [(info: TensorInfo, order: Int)] = []
        entries.reserveCapacity(members.count)
        for (order, member) in members.enumerated() {
            if member.key == "__metadata__" {
                // mlx's save_safetensors writes `null` when given no metadata (mlx_lm.lora's
                // adapters.safetensors); the Rust reference reads that as no metadata too.
                if member.value.isNull { continue }
                metadata = try parseMetadata(member.value, path: path)
            } else {
                let info = try parseTensor(member.key, member.value, dataSize: dataSize, path: path)
                entries.append((info, order))
            }
        }

        // The tensors must tile the data section: sorted by offset, each starts where the last
        // ended, and the last ends at the end of the file.
        entries.sort {
            ($0.info.dataOffsets.lowerBound, $0.info.dataOffsets.upperBound, $0.order)
                < ($1.info.dataOffsets.lowerBound, $1.info.dataOffsets.upperBound, $1.order)
        }
        var position = 0
        var previous: String?
        for (info, _) in entries {
            let begin = info.dataOffsets.lowerBound
            if begin < position {
                throw .offsetsOverlap(path: path, tensor: info.name, other: previous ?? "")
            }
            if begin > position {
                throw .gapBetweenTensors(
                    path: path, tensor: info.name, gapStart: position, gapEnd: begin)
            }
            position = info.dataOffsets.upperBound
            previous = info.name
        }
        if position != dataSize {
            throw .gapBetweenTensors(path: path, tensor: nil, gapStart: position, gapEnd: dataSize)
        }
        return Header(
            tensors: entries.map(\.info), metadata: metadata, dataSectionOffset: headerEnd)
    }

    private static func parseMetadata(
        _ value: JSONValue, path: String
    ) throws(SafeTensorsError) -> [String: String] {
        guard case .object(let members) = value else {
            throw .badMetadata(path: path, reason: "is not an object")
        }
        var result: [String: String] = [:]
        for member in members {
            guard case .string(let s) = member.value else {
                throw .badMetadata(path: path, reason: "value of '\(member.key)' is not a string")
            }
            result[member.key] = s
        }
        return result
    }

    private static func parseTensor(
        _ name: String, _ value: JSONValue, dataSize: Int, path: String
    ) throws(SafeTensorsError) -> TensorInfo {
        guard case .object = value else {
            throw .badTensorEntry(path: path, tensor: name, reason: "entry is not an object")
        }
        guard let dtypeName = value["dtype"]?.stringValue else {
            throw .badTensorEntry(path: path, tensor: name, reason: "missing or non-string 'dtype'")
        }
        guard let dtype = DType(rawValue: dtypeName) else {
            throw .unknownDType(path: path, tensor: name, dtype: dtypeName)
        }
        let shape = try parseShape(value["shape"], name: name, dtype: dtype, path: path)
        let byteCount = shape.byteCount

        guard let offsets = value["data_offsets"]?.arrayValue, offsets.count == 2,
            case .number = offsets[0], case .number = offsets[1]
        else {
            throw .badTensorEntry(
                path: path, tensor: name, reason: "'data_offsets' is not a pair of numbers")
        }
        guard let begin = offsets[0].offsetValue, let end = offsets[1].offsetValue else {
            throw .badTensorEntry(
                path: path, tensor: name, reason: "'data_offsets' are not integers")
        }
        guard begin >= 0, begin <= end, end <= dataSize else {
            throw .offsetsOutOfBounds(
                path: path, tensor: name, begin: begin, end: end, dataSize: dataSize)
        }
        guard end - begin == byteCount else {
            throw .sizeMismatch(path: path, tensor: name, expected: byteCount, actual: end - begin)
        }
        return TensorInfo(name: name, dtype: dtype, shape: shape.dims, dataOffsets: begin..<end)
    }

    /// 2^48 values (256 T): far beyond any real tensor, small enough that counts stay far from
    /// overflow after the small multiplications callers make (× 32 for packed weights, × 64).
    static let maxElements = 1 << 48

    private static func parseShape(
        _ value: JSONValue?, name: String, dtype: DType, path: String
    ) throws(SafeTensorsError) -> (dims: [Int], byteCount: Int) {
        guard let elements = value?.arrayValue else {
            throw .badTensorEntry(path: path, tensor: name, reason: "missing or non-array 'shape'")
        }
        var dims: [Int] = []
        var bytes = dtype.size
        // The product of the non-zero dimensions, bounded even when a zero makes the byte count
        // 0: `[0, 2^60]` has no bytes, yet element counts of its rows, packed-parameter counts
        // (× 32) and group arithmetic downstream multiply what is left and trapped.
        var nonZeroElements = 1
        for element in elements {
            guard case .number(let literal) = element, let dim = element.intValue else {
                let tooLarge = element.offsetValue != nil  // an integer literal that overflows Int
                let reason = tooLarge ? "is too large" : "is not an integer"
                throw .badShape(
                    path: path, tensor: name, reason: "\(element.serialized()) \(reason)")
            }
            guard dim >= 0 else {
                throw .badShape(path: path, tensor: name, reason: "\(literal) is negative")
            }
            let (product, overflow) = bytes.multipliedReportingOverflow(by: dim)
            guard !overflow else {
                throw .badShape(path: path, tensor: name, reason: "size overflows")
            }
            let (elements, tooMany) = nonZeroElements.multipliedReportingOverflow(by: max(dim, 1))
            guard !tooMany, elements <= maxElements else {
                throw .badShape(path: path, tensor: name, reason: "size overflows")
            }
            bytes = product
            nonZeroElements = elements
            dims.append(dim)
        }
        return (dims, bytes)
    }
}

extension JSONValue {
    /// A data offset: an integer literal, with out-of-range values saturated so they fail the
    /// bounds check (reported as out of bounds, not as a format problem).
    fileprivate var offsetValue: Int? {
        if let v = intValue { return v }
        guard case .number(let literal) = self, Self.isIntegerLiteral(literal) else { return nil }
        return literal.hasPrefix("-") ? Int.min : Int.max
    }
}

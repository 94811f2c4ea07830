#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tensor to be written: name, dtype and shape; its bytes come later through `write`.
public struct TensorSpec: Sendable, Equatable {
    public let name: String
    public let dtype: DType
    public let shape: [Int]

    public init(name: String, dtype: DType, shape: [Int]) {
        self.name = name
        self.dtype = dtype
        self.shape = shape
    }

    /// Bytes of data: product of the shape × dtype size (the writer rejects specs where this
    /// overflows or a dimension is negative).
    public var byteCount: Int { checkedByteCount ?? 0 }

    var checkedByteCount: Int? {
        var bytes = dtype.size
        for dim in shape {
            guard dim >= 0 else { return nil }
            let (product, overflow) = bytes.multipliedReportingOverflow(by: dim)
            if overflow { return nil }
            bytes = product
        }
        return bytes
    }
}

/// Streams a .safetensors file to disk: the header first, then each tensor's bytes in spec
/// order, so a convert never holds more than one tensor (plus an 8 MB buffer) in memory.
///
/// Data goes to `<path>.incomplete`; `finish()` checks the byte count, fsyncs and renames it
/// into place. A writer dropped before `finish()` removes its partial file.
public final class SafeTensorsWriter {
    /// Buffered output is written in chunks of this size.
    static let bufferSize = 8 << 20

    public let path: String
    private let temporaryPath: String
    private let expectedDataBytes: Int
    private var writtenDataBytes = 0
    private var fd: Int32
    private var buffer: UnsafeMutableRawBufferPointer
    private var buffered = 0
    private var done = false

    /// Creates `<path>.incomplete` and writes the header. Data order is the order of `tensors`;
    /// the header lists `__metadata__` first (keys sorted), then the tensors in data order, and
    /// is padded with spaces so the data section starts at a multiple of 8.
    public init(
        path: String, tensors: [TensorSpec], metadata: [String: String]?
    ) throws(SafeTensorsError) {
        self.path = path
        temporaryPath = path + ".incomplete"
        let header = try SafeTensorsWriter.header(tensors, metadata: metadata, path: path)
        expectedDataBytes = header.dataBytes
        let headerBytes = Array(header.json.utf8)

        let total = 8 + headerBytes.count + expectedDataBytes
        buffer = .allocate(
            byteCount: max(1, min(SafeTensorsWriter.bufferSize, total)), alignment: 16)
        do {
            fd = try POSIXFile.create(temporaryPath)
        } catch {
            buffer.deallocate()
            throw .io(error)
        }
        do {
            try POSIXFile.preallocate(fd, length: total, path: temporaryPath)
        } catch {
            abandon()
            throw .io(error)
        }
        let length = UInt64(headerBytes.count)
        let prefix = (0..<8).map { UInt8(truncatingIfNeeded: length >> (8 * $0)) } + headerBytes
        do {
            try prefix.withUnsafeBytes(appendResult).get()
        } catch {
            abandon()
            throw error
        }
    }

    deinit {
        if !done { abandon() }
        buffer.deallocate()
    }

    /// Appends tensor data. Call it any number of times per tensor, in spec order.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SafeTensorsError) {
        guard !done else {
            throw .io(FileError(path: temporaryPath, operation: "write", errno: EBADF))
        }
        guard bytes.count <= expectedDataBytes - writtenDataBytes else {
            throw .writtenSizeMismatch(
                path: path, expected: expectedDataBytes,
                written: writtenDataBytes + bytes.count)
        }
        try append(bytes)
        writtenDataBytes += bytes.count
    }

    /// Checks that every tensor's bytes were written, then makes the file durable and moves it
    /// to `path` (replacing any file there). On any error the partial file is removed.
    public func finish() throws(SafeTensorsError) {
        guard !done else {
            throw .io(FileError(path: temporaryPath, operation: "finish", errno: EBADF))
        }
        guard writtenDataBytes == expectedDataBytes else {
            abandon()  // the file can't be completed correctly; don't leave it behind
            throw .writtenSizeMismatch(
                path: path, expected: expectedDataBytes, written: writtenDataBytes)
        }
        do {
            try flush()
        } catch {
            abandon()
            throw error
        }
        do {
            try POSIXFile.sync(fd, path: temporaryPath)
            let closing = fd
            fd = -1
            try POSIXFile.close(closing, path: temporaryPath)
            try POSIXFile.rename(temporaryPath, to: path)
            done = true
            try POSIXFile.syncDirectory(containing: path)
        } catch {
            if !done { abandon() }
            throw .io(error)
        }
    }

    /// Stops writing and removes the partial file. Safe to call more than once.
    public func abandon() {
        if fd >= 0 { _ = system_close(fd) }
        fd = -1
        if !done { unlink(temporaryPath) }
        done = true
    }

    /// Writes a whole file from in-memory tensors (tests, small files).
    public static func write(
        path: String, tensors: [(TensorSpec, [UInt8])], metadata: [String: String]?
    ) throws(SafeTensorsError) {
        let writer = try SafeTensorsWriter(
            path: path, tensors: tensors.map(\.0), metadata: metadata)
        for (_, bytes) in tensors {
            try bytes.withUnsafeBytes { raw in
                Result { () throws(SafeTensorsError) in try writer.write(raw) }
            }.get()
        }
        try writer.finish()
    }

    // MARK: - Buffering

    /// `append` for the stdlib's rethrowing `withUnsafeBytes`, which loses typed errors.
    private func appendResult(_ bytes: UnsafeRawBufferPointer) -> Result<Void, SafeTensorsError> {
        Result { () throws(SafeTensorsError) in try append(bytes) }
    }

    private func append(_ bytes: UnsafeRawBufferPointer) throws(SafeTensorsError) {
        var rest = bytes
        while !rest.isEmpty {
            if buffered == 0 && rest.count >= buffer.count {
                // Large input and nothing pending: skip the copy.
                try writeOut(rest)
                return
            }
            let n = min(rest.count, buffer.count - buffered)
            UnsafeMutableRawBufferPointer(rebasing: buffer[buffered..<buffered + n])
                .copyMemory(from: UnsafeRawBufferPointer(rebasing: rest[0..<n]))
            buffered += n
            rest = UnsafeRawBufferPointer(rebasing: rest[n...])
            if buffered == buffer.count { try flush() }
        }
    }

    private func flush() throws(SafeTensorsError) {
        guard buffered > 0 else { return }
        try writeOut(UnsafeRawBufferPointer(rebasing: buffer[0..<buffered]))
        buffered = 0
    }

    private func writeOut(_ bytes: UnsafeRawBufferPointer) throws(SafeTensorsError) {
        do {
            try POSIXFile.writeAll(fd, bytes, path: temporaryPath)
        } catch {
            throw .io(error)
        }
    }

    // MARK: - Header

    /// The header JSON (padded) and the data section size, after checking the specs.
    static func header(
        _ tensors: [TensorSpec], metadata: [String: String]?, path: String
    ) throws(SafeTensorsError) -> (json: String, dataBytes: Int) {
        var members: [(key: String, value: JSONValue)] = []
        if let metadata {
            let entries = JSONValue.object(metadata.map { ($0.key, .string($0.value)) })
            members.append(("__metadata__", entries.sortedKeys()))
        }
        var seen = Set<String>()
        var offset = 0
        for spec in tensors {
            guard spec.name != "__metadata__", seen.insert(spec.name).inserted else {
                throw .duplicateTensor(path: path, tensor: spec.name)
            }
            guard let size = spec.checkedByteCount else {
                throw .badShape(
                    path: path, tensor: spec.name,
                    reason: "\(spec.shape) has a negative or overflowing dimension")
            }
            let (end, overflow) = offset.addingReportingOverflow(size)
            guard !overflow else {
                throw .badShape(path: path, tensor: spec.name, reason: "total size overflows")
            }
            members.append(
                (
                    spec.name,
                    .object([
                        ("dtype", .string(spec.dtype.rawValue)),
                        ("shape", .array(spec.shape.map(JSONValue.int))),
                        ("data_offsets", .array([.int(offset), .int(end)])),
                    ])
                ))
            offset = end
        }
        var json = JSONValue.object(members).serialized()
        let padding = (8 - json.utf8.count % 8) % 8
        json += String(repeating: " ", count: padding)
        return (json, offset)
    }
}

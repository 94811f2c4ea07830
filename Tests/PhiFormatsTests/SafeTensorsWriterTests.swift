import Foundation
import Testing

@testable import PhiFormats

/// The header JSON of a file image.
private func headerText(_ bytes: [UInt8]) -> String {
    let n = (0..<8).reduce(0) { $0 | Int(bytes[$1]) << (8 * $1) }
    return String(decoding: bytes[8..<8 + n], as: UTF8.self)
}

@Suite struct SafeTensorsWriterTests {
    @Test(arguments: DType.allCases)
    func roundTripsEveryDType(_ dtype: DType) throws {
        let dir = try TempDir()
        let path = dir.file("m.safetensors")
        let specs = [
            TensorSpec(name: "z.weight", dtype: dtype, shape: [3, 5]),
            TensorSpec(name: "a.scalar", dtype: dtype, shape: []),
            TensorSpec(name: "m.empty", dtype: dtype, shape: [0, 4]),
            TensorSpec(name: "b.vec", dtype: dtype, shape: [7]),
        ]
        let payload = specs.enumerated().map { (i, s) in
            (s, xorshiftBytes(s.byteCount, seed: UInt64(i + 1)))
        }
        try SafeTensorsWriter.write(
            path: path, tensors: payload, metadata: ["format": "mlx", "é": "ü"])

        let file = try SafeTensorsFile(path: path)
        #expect(file.metadata == ["format": "mlx", "é": "ü"])
        #expect(file.tensors.map(\.name) == specs.map(\.name))  // data order = spec order
        #expect(file.dataSectionOffset % 8 == 0)
        for (spec, bytes) in payload {
            let t = try #require(file.info(spec.name))
            #expect(t.dtype == dtype && t.shape == spec.shape && t.byteCount == spec.byteCount)
            #expect(Array(file.data(t)) == bytes)
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))
    }

    @Test func headerLayout() throws {
        let dir = try TempDir()
        let path = dir.file("h.safetensors")
        try SafeTensorsWriter.write(
            path: path,
            tensors: [
                (TensorSpec(name: "w", dtype: .bf16, shape: [2]), [1, 2, 3, 4]),
                (TensorSpec(name: "b", dtype: .u8, shape: [1]), [9]),
            ], metadata: ["z": "1", "format": "mlx"])
        let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: path)))
        let header = headerText(bytes)
        let json =
            #"{"__metadata__":{"format":"mlx","z":"1"},"w":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},"b":{"dtype":"U8","shape":[1],"data_offsets":[4,5]}}"#
        #expect(header.hasPrefix(json))
        #expect(header.dropFirst(json.utf8.count).allSatisfy { $0 == " " })
        #expect((8 + header.utf8.count) % 8 == 0)
        #expect(Array(bytes.suffix(5)) == [1, 2, 3, 4, 9])
        // No metadata: no __metadata__ key at all.
        try SafeTensorsWriter.write(path: path, tensors: [], metadata: nil)
        #expect(
            headerText(Array(try Data(contentsOf: URL(fileURLWithPath: path)))).trimmingCharacters(
                in: .whitespaces) == "{}")
    }

    /// Our writer, given the tensors of the file the Python library wrote, in its data order,
    /// reproduces that file byte for byte.
    @Test func reproducesPythonFileExactly() throws {
        let golden = try SafeTensorsFile(path: try STFixtures.path("dtypes.safetensors"))
        let dir = try TempDir()
        let path = dir.file("copy.safetensors")
        let tensors = golden.tensors.map {
            (TensorSpec(name: $0.name, dtype: $0.dtype, shape: $0.shape), Array(golden.data($0)))
        }
        try SafeTensorsWriter.write(path: path, tensors: tensors, metadata: golden.metadata)
        let ours = try Data(contentsOf: URL(fileURLWithPath: path))
        let theirs = try Data(contentsOf: URL(fileURLWithPath: golden.path))
        #expect(ours == theirs)
        // For scripts/make_safetensors_golden.py --check: a file phikit wrote, for Python to read.
        if let out = ProcessInfo.processInfo.environment["PHIKIT_ROUNDTRIP_OUT"] {
            try SafeTensorsWriter.write(
                path: out, tensors: tensors.reversed(), metadata: golden.metadata)
        }
    }

    @Test func streamsInChunksAcrossTheBuffer() throws {
        let dir = try TempDir()
        let path = dir.file("big.safetensors")
        let big = xorshiftBytes(SafeTensorsWriter.bufferSize + 12_346, seed: 9)  // 8 MB + change
        let small = xorshiftBytes(1000, seed: 10)
        let writer = try SafeTensorsWriter(
            path: path,
            tensors: [
                TensorSpec(name: "small", dtype: .u8, shape: [1000]),
                TensorSpec(name: "big", dtype: .u16, shape: [big.count / 2]),
                TensorSpec(name: "tail", dtype: .u8, shape: [1]),
            ], metadata: nil)
        #expect(FileManager.default.fileExists(atPath: path + ".incomplete"))
        #expect(!FileManager.default.fileExists(atPath: path))
        try small.withUnsafeBytes { try writer.write($0) }
        // Uneven pieces: some smaller than the buffer, one larger.
        var offset = 0
        for size in [1, 4095, 3_000_000, SafeTensorsWriter.bufferSize, 1] {
            let end = min(big.count, offset + size)
            try big[offset..<end].withUnsafeBytes { try writer.write($0) }
            offset = end
        }
        try big[offset...].withUnsafeBytes { try writer.write($0) }
        try [UInt8(7)].withUnsafeBytes { try writer.write($0) }
        try writer.finish()
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))

        let file = try SafeTensorsFile(path: path)
        #expect(Array(file.data(try #require(file.info("big")))) == big)
        #expect(Array(file.data(try #require(file.info("small")))) == small)
        #expect(Array(file.data(try #require(file.info("tail")))) == [7])
    }

    @Test func wrongByteCountsThrow() throws {
        let dir = try TempDir()
        let path = dir.file("short.safetensors")
        let specs = [TensorSpec(name: "a", dtype: .f32, shape: [2])]
        let writer = try SafeTensorsWriter(path: path, tensors: specs, metadata: nil)
        try [UInt8](repeating: 0, count: 4).withUnsafeBytes { try writer.write($0) }
        #expect(throws: SafeTensorsError.writtenSizeMismatch(path: path, expected: 8, written: 4)) {
            try writer.finish()
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))
        #expect(!FileManager.default.fileExists(atPath: path))

        let writer2 = try SafeTensorsWriter(path: path, tensors: specs, metadata: nil)
        #expect(throws: SafeTensorsError.writtenSizeMismatch(path: path, expected: 8, written: 9)) {
            try [UInt8](repeating: 0, count: 9).withUnsafeBytes { try writer2.write($0) }
        }
        writer2.abandon()
        writer2.abandon()
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))
    }

    @Test func droppedWriterRemovesPartialFile() throws {
        let dir = try TempDir()
        let path = dir.file("dropped.safetensors")
        do {
            let writer = try SafeTensorsWriter(
                path: path, tensors: [TensorSpec(name: "a", dtype: .u8, shape: [1])], metadata: nil)
            #expect(FileManager.default.fileExists(atPath: path + ".incomplete"))
            _ = writer
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))
    }

    @Test func badSpecsThrow() throws {
        let dir = try TempDir()
        let path = dir.file("x.safetensors")
        #expect(throws: SafeTensorsError.duplicateTensor(path: path, tensor: "a")) {
            _ = try SafeTensorsWriter(
                path: path,
                tensors: [
                    TensorSpec(name: "a", dtype: .u8, shape: [1]),
                    TensorSpec(name: "a", dtype: .u8, shape: [1]),
                ], metadata: nil)
        }
        #expect(throws: SafeTensorsError.duplicateTensor(path: path, tensor: "__metadata__")) {
            _ = try SafeTensorsWriter(
                path: path, tensors: [TensorSpec(name: "__metadata__", dtype: .u8, shape: [1])],
                metadata: nil)
        }
        for shape in [[-1], [Int.max, 2], [1 << 62]] {
            do {
                _ = try SafeTensorsWriter(
                    path: path, tensors: [TensorSpec(name: "s", dtype: .f32, shape: shape)],
                    metadata: nil)
                Issue.record("no error for \(shape)")
            } catch {
                #expect(stCase(error) == "badShape")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: path + ".incomplete"))
    }

    @Test func missingDirectoryIsIOError() throws {
        do {
            try SafeTensorsWriter.write(
                path: "/nonexistent/phikit/out.safetensors", tensors: [], metadata: nil)
            Issue.record("expected an error")
        } catch {
            guard case .io(let e) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(e.errno == ENOENT)
            #expect(e.message.contains("/nonexistent/phikit/out.safetensors.incomplete"))
        }
    }

    @Test func diskFullIsAClearIOError() throws {
        // /dev/full fails every write with ENOSPC.
        let fd = open("/dev/full", O_WRONLY)
        try #require(fd >= 0)
        defer { close(fd) }
        do {
            try [UInt8](repeating: 1, count: 100).withUnsafeBytes { raw in
                try POSIXFile.writeAll(fd, raw, path: "/out/model.safetensors.incomplete")
            }
            Issue.record("expected ENOSPC")
        } catch let error as FileError {
            #expect(error.errno == ENOSPC)
            #expect(error.exitCode == .ioError)
            #expect(
                error.message
                    == "cannot write '/out/model.safetensors.incomplete': No space left on device")
            #expect(error.hint != nil)
            #expect(SafeTensorsError.io(error).exitCode == .ioError)
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test func atomicFileWritesAndReplaces() throws {
        let dir = try TempDir()
        let path = dir.file("config.json")
        try AtomicFile.write(Array("first".utf8), to: path)
        try AtomicFile.write("second, longer".utf8, to: path)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second, longer")
        try AtomicFile.write([UInt8](), to: path)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["config.json"])
        #expect(throws: FileError.self) { try AtomicFile.write([1], to: dir.file("no/such/dir")) }
    }
}

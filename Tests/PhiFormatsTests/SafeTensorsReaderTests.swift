import Foundation
import Testing

@testable import PhiFormats

/// The golden files written by scripts/make_safetensors_golden.py.
enum STFixtures {
    static func path(_ name: String) throws -> String {
        let url = Bundle.module.url(
            forResource: name, withExtension: nil, subdirectory: "Fixtures/safetensors")
        return try #require(url, "missing fixture \(name)").path
    }

    /// expected.json: per file, tensor name → dtype, shape, hex bytes, decoded values.
    static func expected() throws -> JSONValue {
        let file = try MappedFile(path: try path("expected.json"))
        return try JSONValue(parsing: file.bytes)
    }
}

extension [UInt8] {
    init(hex: String) {
        var bytes: [UInt8] = []
        var it = hex.utf8.makeIterator()
        while let hi = it.next(), let lo = it.next() {
            bytes.append(UInt8(String(decoding: [hi, lo], as: UTF8.self), radix: 16) ?? 0)
        }
        self = bytes
    }
}

/// Decodes element `i` of a tensor as a Double, for comparing with Python's values.
private func element(_ data: UnsafeRawBufferPointer, _ dtype: DType, _ i: Int) -> Double {
    func load<T: FixedWidthInteger>(_: T.Type) -> T {
        T(littleEndian: data.loadUnaligned(fromByteOffset: i * MemoryLayout<T>.size, as: T.self))
    }
    switch dtype {
    case .f64: return Double(bitPattern: load(UInt64.self))
    case .f32: return Double(Float(bitPattern: load(UInt32.self)))
    case .f16: return Double(f16ToFloat(load(UInt16.self)))
    case .bf16: return Double(bf16ToFloat(load(UInt16.self)))
    case .i64: return Double(load(Int64.self))
    case .i32: return Double(load(Int32.self))
    case .i16: return Double(load(Int16.self))
    case .i8: return Double(load(Int8.self))
    case .u64: return Double(load(UInt64.self))
    case .u32: return Double(load(UInt32.self))
    case .u16: return Double(load(UInt16.self))
    case .u8, .bool, .f8e4m3, .f8e5m2: return Double(load(UInt8.self))
    }
}

@Suite struct SafeTensorsReaderTests {
    @Test(arguments: ["dtypes.safetensors", "mlx_bf16.safetensors"])
    func readsGoldenFile(_ name: String) throws {
        let file = try SafeTensorsFile(path: try STFixtures.path(name))
        let expected = try #require(try STFixtures.expected()[name])
        let tensors = try #require(expected["tensors"]?.objectValue)

        let metadata = try #require(expected["metadata"]?.objectValue)
        #expect(
            file.metadata
                == Dictionary(
                    uniqueKeysWithValues: metadata.map { ($0.key, $0.value.stringValue ?? "") }))
        #expect(Set(file.tensors.map(\.name)) == Set(tensors.map(\.key)))
        #expect(file.tensors.count == tensors.count)
        // Ordered by data offset, tiling the data section.
        var position = 0
        for t in file.tensors {
            #expect(t.dataOffsets.lowerBound == position)
            position = t.dataOffsets.upperBound
        }
        #expect(file.dataSectionOffset + position == file.fileSize)

        for (tensorName, want) in tensors {
            let t = try #require(file.info(tensorName))
            #expect(t.dtype.rawValue == want["dtype"]?.stringValue)
            #expect(t.shape == want["shape"]?.arrayValue?.compactMap(\.intValue))
            let data = file.data(t)
            #expect(Array(data) == [UInt8](hex: want["hex"]?.stringValue ?? "?"), "\(tensorName)")
            #expect(t.byteCount == t.elementCount * t.dtype.size)
            let values = try #require(want["values"]?.arrayValue)
            #expect(values.count == t.elementCount)
            for (i, v) in values.enumerated() {
                let expectedValue = v.stringValue.flatMap { Double($0) } ?? v.doubleValue
                #expect(element(data, t.dtype, i) == expectedValue, "\(tensorName)[\(i)]")
            }
        }
    }

    @Test func goldenSpecials() throws {
        let file = try SafeTensorsFile(path: try STFixtures.path("dtypes.safetensors"))
        let scalar = try #require(file.info("scalar"))
        #expect(scalar.shape == [] && scalar.elementCount == 1 && scalar.byteCount == 4)
        let empty = try #require(file.info("empty"))
        #expect(empty.shape == [0, 3] && empty.elementCount == 0 && file.data(empty).isEmpty)
        #expect(file.info("nope") == nil)
        #expect(file.dataSectionOffset % 8 == 0)
    }

    @Test func mlxFileHasMisalignedDataAndStillReads() throws {
        let file = try SafeTensorsFile(path: try STFixtures.path("mlx_bf16.safetensors"))
        #expect(file.dataSectionOffset % 8 != 0)  // mlx does not pad the header
        let w = try #require(file.info("model.layers.0.weight"))
        var out = [Float](repeating: 0, count: w.elementCount)
        out.withUnsafeMutableBufferPointer {
            HalfConvert.widen(file.data(w), dtype: .bf16, into: $0)
        }
        #expect(out.first == -2 && out.last == 2)
    }

    @Test func releaseKeepsDataReadable() throws {
        let file = try SafeTensorsFile(path: try STFixtures.path("dtypes.safetensors"))
        for t in file.tensors {
            let before = Array(file.data(t))
            file.willNeed(t)
            file.release(t)
            #expect(Array(file.data(t)) == before)
        }
    }

    @Test func missingFileIsNoInput() throws {
        do {
            _ = try SafeTensorsFile(path: "/nonexistent/phikit/x.safetensors")
            Issue.record("expected an error")
        } catch {
            guard case .io(let e) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(e.errno == ENOENT)
            #expect(error.exitCode == .noInput)
            #expect(error.message.contains("/nonexistent/phikit/x.safetensors"))
        }
    }

    @Test func directoryIsIOError() throws {
        let dir = try TempDir()
        do {
            _ = try SafeTensorsFile(path: dir.path)
            Issue.record("expected an error")
        } catch {
            // The same fault as a directory in place of config.json or tokenizer.json: 65.
            #expect(error.exitCode == .dataError)
            guard case .io(let e) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(e.wrongType == "a directory")
        }
    }

    @Test func mappedFileBasics() throws {
        let dir = try TempDir()
        let empty = try MappedFile(path: try dir.write("empty", []))
        #expect(empty.bytes.isEmpty)
        empty.dropPages(0..<100)
        empty.willNeed(0..<100)
        let bytes = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let file = try MappedFile(path: try dir.write("data", bytes))
        #expect(Array(file.bytes) == bytes)
        file.dropPages(-5..<30_000)
        file.dropPages(30_000..<40_000)  // past the end: nothing to do
        file.willNeed(4095..<4097)
        #expect(Array(file.bytes) == bytes)
        #expect(throws: FileError.self) { _ = try MappedFile(path: dir.file("missing")) }
    }

    /// A file mapped for huge pages (a model about to run) reads as the file, whether or not
    /// the kernel could map it in 2 MiB pages (a file over 2 MiB is mapped at a 2 MiB boundary
    /// and probed; its page cache may be dropped and read again).
    @Test func hugePageMappingHoldsTheFile() throws {
        let dir = try TempDir()
        for count in [0, 1, 20_000, 5 << 20 | 12_345] {
            let bytes = (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131) ^ ($0 >> 11)) }
            let path = try dir.write("data\(count)", bytes)
            let first = try MappedFile(path: path, hugePages: true)
            let second = try MappedFile(path: path, hugePages: true)  // while the first maps it
            for file in [first, second] {
                #expect(Array(file.bytes) == bytes)
                file.dropPages(0..<count)
                file.willNeed(0..<count)
                #expect(Array(file.bytes) == bytes)
                if count < 2 << 20 { #expect(!file.isHugePageMapped) }
            }
        }
        #expect(throws: FileError.self) {
            _ = try MappedFile(path: dir.file("missing"), hugePages: true)
        }
    }
}

import Foundation
import PhiFormats
import PhiKit
import TestSupport
import Testing

/// The tiny Hugging Face checkpoints of the convert goldens, rebuilt at test time.
///
/// `scripts/make_convert_golden.py` commits, per source, the small files (config.json,
/// generation_config.json, *.py, the shard index) and a `weights.json` that describes the
/// safetensors files instead of storing them: each tensor's name, dtype, shape, seed and the
/// sha256 its bytes must have. This is the Swift twin of the script's generator: value `i` of
/// a tensor is `splitmix64(seed + (i+1)·φ)` mapped straight to a float *bit pattern* (random
/// sign and mantissa, exponent in [-9, -2]), so no rounding is involved anywhere; rows with
/// `r % 17 == 3` are then made constant. Tokenizer files are copied from Tests/Fixtures.
enum ConvertFixtures {
    static let root: URL = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/convert")

    static func temporaryDirectory(_ label: String) throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-convert-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func json(_ url: URL) throws -> JSONValue {
        try JSONValue(parsing: try Data(contentsOf: url))
    }

    /// Records an issue for every tensor of the output's weight files (file, name, dtype,
    /// shape, sha256 of the bytes, in data order) that differs from the golden manifest's
    /// list (mlx_lm's save order), and checks each file's `{"format": "mlx"}` metadata.
    /// Returns how many tensors the manifest lists.
    @discardableResult
    static func expectTensors(of out: URL, files: [String], asIn manifest: JSONValue) throws -> Int {
        let expected = (manifest["tensors"]?.arrayValue ?? []).map { t in
            [
                t["file"]?.stringValue ?? "", t["name"]?.stringValue ?? "",
                t["dtype"]?.stringValue ?? "",
                (t["shape"]?.arrayValue ?? []).map { $0.intValue.map(String.init) ?? "?" }.joined(
                    separator: ","),
                t["sha256"]?.stringValue ?? "",
            ]
        }
        var actual: [[String]] = []
        for file in files where file.hasSuffix(".safetensors") {
            let st = try SafeTensorsFile(path: out.appendingPathComponent(file).path)
            #expect(st.metadata == ["format": "mlx"])
            for t in st.tensors {
                actual.append([
                    file, t.name, t.dtype.rawValue, t.shape.map(String.init).joined(separator: ","),
                    SHA256Hasher.hex(of: st.data(t)),
                ])
            }
        }
        #expect(actual.count == expected.count)
        for (a, e) in zip(actual, expected) where a != e {
            Issue.record("tensor differs: phikit \(a) vs mlx_lm \(e)")
        }
        return expected.count
    }

    /// Writes source `name` into `dir` (created) and checks every tensor against its sha256.
    static func buildSource(_ name: String, into dir: URL) throws {
        let fm = FileManager.default
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        let fixture = root.appendingPathComponent("sources/\(name)")
        for file in try fm.contentsOfDirectory(atPath: fixture.path) where file != "weights.json" {
            try fm.copyItem(
                at: fixture.appendingPathComponent(file), to: dir.appendingPathComponent(file))
        }
        let spec = try json(fixture.appendingPathComponent("weights.json"))
        for file in spec["files"]?.arrayValue ?? [] {
            var tensors: [(TensorSpec, [UInt8])] = []
            for t in file["tensors"]?.arrayValue ?? [] {
                let dtype = try #require(DType(rawValue: t["dtype"]?.stringValue ?? ""))
                let shape = (t["shape"]?.arrayValue ?? []).compactMap(\.intValue)
                let seed = try #require(UInt64(t["seed"]?.stringValue ?? "", radix: 16))
                let bytes = generate(dtype, shape: shape, seed: seed)
                let name = t["name"]?.stringValue ?? ""
                #expect(
                    SHA256Hasher.hex(of: bytes) == t["sha256"]?.stringValue,
                    "generator drift: \(name) differs from make_convert_golden.py's")
                tensors.append((TensorSpec(name: name, dtype: dtype, shape: shape), bytes))
            }
            let meta = file["metadata"]?.objectValue?.reduce(into: [String: String]()) {
                $0[$1.key] = $1.value.stringValue
            }
            try SafeTensorsWriter.write(
                path: dir.appendingPathComponent(file["file"]?.stringValue ?? "").path,
                tensors: tensors, metadata: meta)
        }
        for (out, rel) in spec["tokenizer_files"]?.objectValue ?? [] {
            let rel = try #require(rel.stringValue, "tokenizer_files.\(out) is not a path")
            try fm.copyItem(at: try TestPaths.sharedURL(rel), to: dir.appendingPathComponent(out))
        }
    }

    /// The tensor's little-endian bytes (see the type comment).
    static func generate(_ dtype: DType, shape: [Int], seed: UInt64) -> [UInt8] {
        let n = shape.reduce(1, *)
        var words = [UInt32](repeating: 0, count: n)
        for i in 0..<n {
            var z = seed &+ UInt64(i + 1) &* 0x9E37_79B9_7F4A_7C15
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            z ^= z >> 31
            let sign = UInt32(z & 1)
            let eOff = UInt32((z >> 1) % 8)
            switch dtype {
            case .bf16: words[i] = sign << 15 | (125 - eOff) << 7 | UInt32((z >> 8) & 0x7F)
            case .f16: words[i] = sign << 15 | (13 - eOff) << 10 | UInt32((z >> 8) & 0x3FF)
            default: words[i] = sign << 31 | (125 - eOff) << 23 | UInt32((z >> 8) & 0x7F_FFFF)
            }
        }
        if shape.count == 2 {
            let (rows, cols) = (shape[0], shape[1])
            for r in stride(from: 3, to: rows, by: 17) {
                for c in 0..<cols { words[r * cols + c] = words[r * cols] }
            }
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(n * dtype.size)
        for w in words {
            for b in 0..<dtype.size { bytes.append(UInt8(truncatingIfNeeded: w >> (8 * b))) }
        }
        return bytes
    }
}

/// One committed golden case: what mlx_lm.convert wrote for a source and option set.
struct ConvertGoldenCase: CustomTestStringConvertible, Sendable {
    let name: String
    var testDescription: String { name }

    var directory: URL { ConvertFixtures.root.appendingPathComponent("cases/\(name)") }

    static let all: [ConvertGoldenCase] = {
        let dir = ConvertFixtures.root.appendingPathComponent("cases")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map(ConvertGoldenCase.init)
    }()

    func manifest() throws -> JSONValue {
        try ConvertFixtures.json(directory.appendingPathComponent("manifest.json"))
    }

    /// The case's options as `ConvertOptions`, for a source already at `source`.
    func options(source: URL, output: URL) throws -> ConvertOptions {
        let o = try #require(try manifest()["options"])
        var options = ConvertOptions(source: source.path, output: output.path)
        options.quantize = o["quantize"]?.boolValue ?? false
        options.bits = o["bits"]?.intValue
        options.groupSize = o["group"]?.intValue
        options.mode = o["mode"]?.stringValue ?? "affine"
        options.quantPredicate = o["quant_predicate"]?.stringValue.flatMap {
            MixedQuantRecipe(rawValue: $0)
        }
        options.dtype = o["dtype"]?.stringValue.flatMap { DType(pythonName: $0) }
        options.dequantize = o["dequantize"]?.boolValue ?? false
        options.maxShardSize = o["max_shard_bytes"]?.intValue ?? (5 << 30)
        options.environment = [:]
        return options
    }

    /// The case's source, built once per test process and shared read-only by every case
    /// that converts it: a tiny checkpoint, or (`case:NAME`) the output of converting that
    /// other case first. (About 70 golden conversions read 5 checkpoints and 2 upstream
    /// outputs; building each for every case was most of the suite's time.)
    func prepareSource() throws -> URL {
        let source = try #require(try manifest()["options"]?["source"]?.stringValue)
        if source.hasPrefix("case:") {
            return try ConvertGoldenCase(name: String(source.dropFirst(5))).prepareOutput()
        }
        return try SourceCache.directory("source-\(source)") { dir in
            try ConvertFixtures.buildSource(source, into: dir)
        }
    }
}

extension ConvertGoldenCase {
    /// This case's output, converted once per test process and shared read-only (the source
    /// of a `case:` convert case, or a quantized base for fuse).
    func prepareOutput() throws -> URL {
        let source = try prepareSource()
        return try SourceCache.directory("case-\(name)") { out in
            _ = try convert(try options(source: source, output: out))
        }
    }
}

/// Directories built once per test process (under one temporary folder, removed when the
/// process exits) for tests that only read them.
enum SourceCache {
    private static let built = OncePerKey<URL>()

    static let root: URL = {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-sources-\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(at: SourceCache.root) }
        return dir
    }()

    /// `root/key`, made by `build` (given the path, which does not exist yet) the first time.
    static func directory(_ key: String, build: (URL) throws -> Void) throws -> URL {
        try built.value(key) {
            let dir = root.appendingPathComponent(key)
            do {
                try build(dir)
            } catch {
                try? FileManager.default.removeItem(at: dir)
                throw error
            }
            return dir
        }
    }
}

import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// phikit's fuse against the committed outputs of `mlx_lm.fuse` (mlx-lm 0.32.2, mlx 0.32.4;
/// `scripts/make_fuse_golden.py`): every tensor's file, name, dtype, shape and bytes in save
/// order, config.json, the index and README.md byte for byte, and the file list. The bases
/// are the convert goldens' tiny checkpoints (or a convert case's output, which phikit's
/// convert reproduces byte for byte); the adapters are committed.
@Suite("fuse matches mlx_lm.fuse", .tags(.slow), .skippedWhenFast)
struct FuseGoldenTests {
    @Test(arguments: FuseGoldenCase.all)
    func goldenCase(_ golden: FuseGoldenCase) throws {
        try golden.verify { _ in }
    }

    /// The same bytes when rows stream through in chunks of a few rows on three threads.
    @Test(arguments: FuseGoldenCase.all.filter {
        ["phi4-bf16-dora", "phi4-q4g64-lora", "phi2-q4g64-lora"].contains($0.name)
    })
    func goldenCaseInSmallChunks(_ golden: FuseGoldenCase) throws {
        try golden.verify { o in
            o.chunkElements = 1000
            o.threads = 3
        }
    }
}

struct FuseGoldenCase: CustomTestStringConvertible, Sendable {
    static let root = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuse")
    let name: String
    var testDescription: String { name }
    var directory: URL { Self.root.appendingPathComponent("cases/\(name)") }

    static let all: [FuseGoldenCase] = {
        let dir = root.appendingPathComponent("cases")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
        return names.sorted().map(FuseGoldenCase.init)
    }()

    static func adapter(_ name: String) -> URL {
        root.appendingPathComponent("adapters/\(name)")
    }

    /// A base model: a convert source (`phi4-bf16`) or a convert case's output
    /// (`case:phi4-bf16-q4g64`), built once per test process.
    static func base(_ spec: String) throws -> URL {
        if spec.hasPrefix("case:") {
            return try ConvertGoldenCase(name: String(spec.dropFirst(5))).prepareOutput()
        }
        return try SourceCache.directory("source-\(spec)") { dir in
            try ConvertFixtures.buildSource(spec, into: dir)
        }
    }

    func verify(configure: (inout FuseOptions) -> Void) throws {
        let manifest = try ConvertFixtures.json(directory.appendingPathComponent("manifest.json"))
        let o = try #require(manifest["options"])
        let base = try Self.base(try #require(o["base"]?.stringValue))
        let adapter = Self.adapter(try #require(o["adapter"]?.stringValue))
        let work = try ConvertFixtures.temporaryDirectory("fuse-\(name)")
        defer { try? FileManager.default.removeItem(at: work) }
        let out = work.appendingPathComponent("out")
        var options = FuseOptions(
            model: base.path, adapterPath: adapter.path, output: out.path, environment: [:])
        options.dequantize = o["dequantize"]?.boolValue ?? false
        configure(&options)
        let summary = try fuse(options).model

        try ConvertFixtures.expectTensors(of: out, files: summary.files, asIn: manifest)
        for file in ["config.json", "model.safetensors.index.json", "README.md"] {
            let mine = try Data(contentsOf: out.appendingPathComponent(file))
            let theirs = try Data(contentsOf: directory.appendingPathComponent(file))
            #expect(mine == theirs, "\(file) differs from mlx_lm's")
        }
        let goldenFiles = Set((manifest["files"]?.arrayValue ?? []).compactMap(\.stringValue))
        let extra = Set(summary.files).subtracting(goldenFiles)
            .subtracting(ConvertGoldenTests.extraTokenizerFiles)
            .subtracting([ConvertManifest.fileName])
        #expect(goldenFiles.isSubset(of: Set(summary.files)))
        #expect(extra.isEmpty, "unexpected files: \(extra.sorted())")
    }
}

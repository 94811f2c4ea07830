import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// phikit's convert against the committed outputs of `mlx_lm.convert` (mlx-lm 0.32.2,
/// mlx 0.32.4; `scripts/make_convert_golden.py`): every tensor's bytes (sha256), dtype,
/// shape, file and order, config.json, the index and README.md byte for byte, the file list,
/// and the "bits per weight" figure.
@Suite("convert matches mlx_lm.convert", .tags(.slow), .skippedWhenFast)
struct ConvertGoldenTests {
    /// Files phikit writes that mlx_lm does not: the source's tokenizer files, copied as they
    /// are instead of re-saved through transformers (see ConvertFiles).
    static let extraTokenizerFiles: Set<String> = [
        "added_tokens.json", "special_tokens_map.json", "tokenizer.model",
    ]

    @Test(arguments: ConvertGoldenCase.all)
    func goldenCase(_ golden: ConvertGoldenCase) throws {
        try Self.verify(golden) { _ in }
    }

    /// The same bytes when tensors stream through in many small chunks and blocks, spread
    /// over more threads than rows sometimes (every chunking edge: partial last chunk, one
    /// row per chunk, one block per thread).
    @Test(
        arguments: ConvertGoldenCase.all.filter { c in
            // all but the bits × groups grid, of which two corners
            let grid = c.name.wholeMatch(of: /phi(35|4)-bf16-q\dg\d+/) != nil
            return !grid || c.name.hasSuffix("q3g32") || c.name.hasSuffix("q6g128")
        })
    func goldenCaseInSmallChunks(_ golden: ConvertGoldenCase) throws {
        try Self.verify(golden) { o in
            o.chunkElements = 1000
            o.blockElements = 300
            o.threads = 3
        }
    }

    static func verify(
        _ golden: ConvertGoldenCase, configure: (inout ConvertOptions) -> Void
    ) throws {
        let manifest = try golden.manifest()
        let work = try ConvertFixtures.temporaryDirectory(golden.name)
        defer { try? FileManager.default.removeItem(at: work) }
        let source = try golden.prepareSource()
        let out = work.appendingPathComponent("out")
        var options = try golden.options(source: source, output: out)
        configure(&options)
        let summary = try convert(options)

        // Tensors: per file, in data order, exactly mlx_lm's save order and bytes.
        let expected = try ConvertFixtures.expectTensors(
            of: out, files: summary.files, asIn: manifest)
        #expect(summary.tensorCount == expected)

        for file in ["config.json", "model.safetensors.index.json", "README.md"] {
            let mine = try Data(contentsOf: out.appendingPathComponent(file))
            let theirs = try Data(contentsOf: golden.directory.appendingPathComponent(file))
            #expect(mine == theirs, "\(file) differs from mlx_lm's")
        }

        // Files: mlx_lm's list, plus the copied tokenizer extras.
        let goldenFiles = Set((manifest["files"]?.arrayValue ?? []).compactMap(\.stringValue))
        let mine = Set(summary.files)
        #expect(
            goldenFiles.subtracting(mine).isEmpty,
            "missing: \(goldenFiles.subtracting(mine).sorted())")
        // phikit's own manifest (what `verify` checks a converted model against) is written too.
        #expect(mine.contains(ConvertManifest.fileName))
        let extra = mine.subtracting(goldenFiles).subtracting(extraTokenizerFiles)
            .subtracting([ConvertManifest.fileName])
        #expect(extra.isEmpty, "unexpected files: \(extra.sorted())")

        if let bpw = manifest["bits_per_weight"]?.stringValue {
            #expect(summary.bitsPerWeightText == bpw)
        }
        // Nothing left beside the output.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: work.path)
            .filter { $0.contains(".incomplete") || $0.contains(".old-") }
        #expect(leftovers.isEmpty)
    }

    @Test("the Swift generator reproduces every committed source checksum")
    func sourcesRebuild() throws {
        let sources = try FileManager.default.contentsOfDirectory(
            atPath: ConvertFixtures.root.appendingPathComponent("sources").path)
        #expect(sources.count >= 4)
        for name in sources {
            let dir = try ConvertFixtures.temporaryDirectory("src")
            defer { try? FileManager.default.removeItem(at: dir) }
            try ConvertFixtures.buildSource(name, into: dir.appendingPathComponent(name))
        }
    }
}

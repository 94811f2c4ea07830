import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// `verify --target mlx-swift / mlx-lm`: the facts MLX Swift decodes (read from its sources;
/// see MLXSwiftFacts) applied to converted models.
@Suite("verify --target")
struct VerifyTargetTests {
    /// A writable copy of a convert golden case's output (the shared one is read-only).
    static func copy(_ convertCase: String, into work: URL) throws -> URL {
        let source = try ConvertGoldenCase(name: convertCase).prepareOutput()
        let dir = work.appendingPathComponent(convertCase)
        try FileManager.default.copyItem(at: source, to: dir)
        return dir
    }

    static func targetCheck(_ dir: URL, fix: Bool = false) -> LayerOutcome {
        var check = TargetCheck(directory: dir.path, targets: [.mlxSwift, .mlxLM], fix: fix)
        return check.run()
    }

    /// The tiny Phi-4-mini-shaped model with Phi-4-mini's real tokenizer and template: its
    /// turns end with <|end|> (200020), which config.json's eos_token_id (310) lacks — the
    /// tutorial's hand-added extraEOSTokens. --fix writes it into generation_config.json and
    /// refreshes convert's manifest, after which the target layer passes and the manifest
    /// matches the file.
    @Test func phi4MiniEndTokenIsReportedAndFixed() throws {
        let work = try ConvertFixtures.temporaryDirectory("verify-target")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.copy("phi4-bf16-q4g64", into: work)
        let before = Self.targetCheck(dir)
        #expect(before.result.status == .failed)
        let end = try #require(before.findings.first { $0.code == "target_end_token" })
        #expect(end.message.contains("<|end|> (200020)"))
        #expect(end.hint?.contains("--fix") == true)
        let generationPath = dir.appendingPathComponent("generation_config.json").path
        #expect(!FileManager.default.fileExists(atPath: generationPath))

        let fixed = Self.targetCheck(dir, fix: true)
        #expect(fixed.result.status == .warnings)
        #expect(fixed.findings.map(\.code) == ["target_end_token_fixed"])
        let generation = try #require(try GenerationConfig.load(directory: dir.path))
        #expect(generation.eosTokenIds == [310, 200020])
        let manifest = try #require(try ConvertManifest.read(directory: dir.path))
        let bytes = try LocalFile.read(generationPath)
        #expect(manifest.files["generation_config.json"]?.sha256 == SHA256Hasher.hex(of: bytes))

        let after = Self.targetCheck(dir)
        #expect(after.result.status == .passed, "\(after.findings)")
    }

    /// verify runs the layer only when asked, and reports it like the others.
    @Test func verifyRunsTheTargetLayerWhenAsked() throws {
        let dir = try ConvertGoldenCase(name: "phi35-bf16-q4g64").prepareOutput()
        var options = VerifyOptions(model: dir.path, environment: [:])
        options.offline = true
        #expect(try verify(options).layers.first { $0.layer == .target }?.status == .skipped)
        options.targets = [.mlxSwift]
        let report = try verify(options)
        let layer = try #require(report.layers.first { $0.layer == .target })
        // (this fixture's generation_config moved Phi-3.5's stop ids into its tiny vocabulary,
        // so <|end|> is 32007 there but not in eos_token_id: the layer reports it)
        #expect(layer.status == .failed)
        #expect(report.findings.contains { $0.layer == .target && $0.code == "target_end_token" })
        #expect(layer.summary.contains("mlx-swift-lm 3.31.4"))
    }

    /// mlx_lm's mixed recipes without --q-group-size write `"group_size": null` per layer;
    /// MLX Swift's Quantization needs an integer there.
    @Test func mixedRecipeWithNullGroupSize() throws {
        let work = try ConvertFixtures.temporaryDirectory("verify-target")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.copy("phi35-bf16-mixed_3_6", into: work)
        let q = Self.targetCheck(dir).findings.filter { $0.code == "target_quantization" }
        #expect(!q.isEmpty)
        #expect(q.allSatisfy { $0.message.contains("group_size must be an integer (it is null)") })
        #expect(q.first?.hint?.contains("--group-size") == true)
    }

    @Test func missingRequiredKeyAndWrongType() throws {
        let work = try ConvertFixtures.temporaryDirectory("verify-target")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.copy("phi35-bf16-q4g64", into: work)
        let path = dir.appendingPathComponent("config.json")
        var config = try JSONValue(parsing: try Data(contentsOf: path))
        config.set("original_max_position_embeddings", nil)
        config.set("tie_word_embeddings", .string("yes"))
        try Data(config.pythonJSONDump(indent: 4).utf8).write(to: path)
        var check = TargetCheck(directory: dir.path, targets: [.mlxSwift], fix: false)
        let outcome = check.run()
        let codes = outcome.findings.map(\.code)
        #expect(codes.contains("target_missing_key"))
        #expect(codes.contains("target_key_type"))
        #expect(outcome.findings.contains { $0.message.contains("'original_max_position_embeddings'") })
    }

    @Test func unknownModelType() throws {
        let work = try ConvertFixtures.temporaryDirectory("verify-target")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.copy("phi35-bf16-q4g64", into: work)
        let path = dir.appendingPathComponent("config.json")
        var config = try JSONValue(parsing: try Data(contentsOf: path))
        config.set("model_type", .string("phi4flash"))
        try Data(config.pythonJSONDump(indent: 4).utf8).write(to: path)
        var check = TargetCheck(directory: dir.path, targets: [.mlxSwift, .mlxLM], fix: false)
        let findings = check.run().findings.filter { $0.code == "target_model_type" }
        #expect(findings.count == 2)
    }
}

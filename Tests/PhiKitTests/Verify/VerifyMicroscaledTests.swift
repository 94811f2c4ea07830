import Foundation
import PhiFormats
import Testing

@testable import PhiKit

/// verify and list on mxfp4 / nvfp4 / mxfp8 and mixed-recipe conversions of the bundled
/// stories model: intact ones pass every layer; a NaN scale byte is named.
@Suite("verify and list know the mx formats")
struct VerifyMicroscaledTests {
    typealias F = VerifyFixture

    static func converted(
        _ label: String, mode: String = "affine", recipe: MixedQuantRecipe? = nil
    )
        throws -> URL
    {
        let work = try F.temporaryDirectory(label)
        let output = work.appendingPathComponent("Stories-\(label)")
        var options = ConvertOptions(
            source: "stories-260k", output: output.path, environment: F.environment(work))
        options.quantize = true
        options.mode = mode
        options.quantPredicate = recipe
        options.threads = 2
        _ = try convert(options)
        return output
    }

    @Test(arguments: ["mxfp4", "nvfp4", "mxfp8"])
    func intact(_ mode: String) throws {
        let model = try Self.converted(mode, mode: mode)
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let report = try F.verify(model)
        #expect(report.findings.isEmpty, "\(report.findings)")
        for layer in [VerifyLayer.bytes, .structure, .model, .numbers] {
            #expect(report.status(layer) == .passed, "\(layer)")
        }
        #expect(ModelSummary.quantizationLabel(model.path) == "mlx \(mode)")
    }

    @Test func mixedRecipeIsListedAsMixed() throws {
        let model = try Self.converted("mixed", recipe: .mixed_3_6)
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        #expect(try F.verify(model).findings.isEmpty)
        #expect(ModelSummary.quantizationLabel(model.path) == "mlx mixed 3/6")
    }

    @Test("an E8M0 scale byte of 255 (NaN) is a non-finite scale")
    func nanScale() throws {
        let model = try Self.converted("nan", mode: "mxfp4")
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        let name = "model.layers.0.self_attn.o_proj.scales"
        let file = model.appendingPathComponent(try F.shard(of: name, in: model))
        try F.poke(file, at: try F.dataOffset(of: name, in: file) + 3, [255])
        let found = try F.verify(model).findings("non_finite_scale")
        #expect(found.map(\.tensor) == [name])
    }
}

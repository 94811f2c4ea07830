import Foundation
import PhiFormats
import PhiKit
import Testing

/// What convert refuses, and that a refusal writes nothing: no output, no temporary directory.
@Suite("convert refuses bad input before writing")
struct ConvertRefusalTests {
    /// A fresh copy of a tiny source plus an output path beside it.
    struct Scratch {
        let work: URL
        let source: URL
        var output: URL { work.appendingPathComponent("out") }

        init(_ source: String = "phi35-bf16") throws {
            work = try ConvertFixtures.temporaryDirectory("refuse")
            self.source = work.appendingPathComponent("src")
            try ConvertFixtures.buildSource(source, into: self.source)
        }

        func options(quantize: Bool = true) -> ConvertOptions {
            var o = ConvertOptions(source: source.path, output: output.path, environment: [:])
            o.quantize = quantize
            return o
        }

        /// Rewrites one top-level key of the source's config.json.
        func setConfig(_ key: String, _ value: JSONValue) throws {
            let url = source.appendingPathComponent("config.json")
            var config = try ConvertFixtures.json(url)
            config.set(key, value)
            try Data(config.pythonJSONDump(indent: 2).utf8).write(to: url)
        }

        /// Nothing but the source in the work directory.
        func expectNothingWritten() throws {
            let entries = try FileManager.default.contentsOfDirectory(atPath: work.path)
            #expect(entries == ["src"], "left behind: \(entries)")
        }

        func remove() { try? FileManager.default.removeItem(at: work) }
    }

    @Test("a mixed recipe on a phi model (no down_proj) is refused, as mlx_lm refuses it")
    func mixedRecipeNeedsDownProj() throws {
        let s = try Scratch("phi2-fp16")
        defer { s.remove() }
        var options = s.options()
        options.quantPredicate = .mixed_3_6
        do {
            _ = try convert(options)
            Issue.record("converted a phi model with mixed_3_6")
        } catch let error as ConvertError {
            #expect(error.message.contains("needs down_proj layers"), "\(error.message)")
            #expect(error.exitCode == .usage)
        }
        try s.expectNothingWritten()
    }

    @Test func existingOutputNeedsForce() throws {
        let s = try Scratch()
        defer { s.remove() }
        _ = try convert(s.options())  // an earlier output: --force may replace it
        let marker = s.output.appendingPathComponent("notes.txt")
        try Data("old".utf8).write(to: marker)

        #expect(throws: ConvertError.outputExists(path: s.output.path)) { try convert(s.options()) }
        #expect(FileManager.default.fileExists(atPath: marker.path))

        var forced = s.options()
        forced.force = true
        let summary = try convert(forced)
        #expect(!FileManager.default.fileExists(atPath: marker.path))
        #expect(summary.files.contains("model.safetensors"))
        let entries = try FileManager.default.contentsOfDirectory(atPath: s.work.path).sorted()
        #expect(entries == ["out", "src"])
    }

    @Test func missingShard() throws {
        let s = try Scratch()
        defer { s.remove() }
        try FileManager.default.removeItem(
            at: s.source.appendingPathComponent("model-00002-of-00002.safetensors"))
        #expect {
            try convert(s.options())
        } throws: { error in
            guard let e = error as? WeightsError, case .missingShard(_, let file) = e else {
                return false
            }
            return file == "model-00002-of-00002.safetensors" && e.exitCode == .dataError
        }
        try s.expectNothingWritten()
    }

    @Test func wrongShapeNamesTheTensor() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.setConfig("intermediate_size", .int(200))
        #expect {
            try convert(s.options())
        } throws: { error in
            guard let e = error as? ConvertError,
                case .wrongShape(let name, _, let expected, let actual) = e
            else { return false }
            return name == "model.layers.0.mlp.gate_up_proj.weight" && expected == [400, 128]
                && actual == [384, 128] && e.exitCode == .dataError
                && e.message.contains("model.layers.0.mlp.gate_up_proj.weight")
        }
        try s.expectNothingWritten()
    }

    @Test func unsupportedArchitectureNamesModelType() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.setConfig("model_type", .string("gemma"))
        #expect {
            try convert(s.options())
        } throws: { error in
            guard let e = error as? any UserFacingError else { return false }
            return e.message.contains("gemma") && e.exitCode == .dataError
        }
        try s.expectNothingWritten()
    }

    @Test func unexpectedTensor() throws {
        let s = try Scratch()
        defer { s.remove() }
        try s.setConfig("num_hidden_layers", .int(1))  // yet layer 1's tensors are there
        #expect {
            try convert(s.options())
        } throws: { error in
            guard case .unexpectedTensor(let name, _)? = error as? TensorSetError else {
                return false
            }
            return name.hasPrefix("model.layers.1.")
        }
        try s.expectNothingWritten()
    }

    @Test func badOptions() throws {
        let s = try Scratch()
        defer { s.remove() }
        var o = s.options()
        o.bits = 7
        #expect(throws: QuantizationError.unsupportedBits(7)) { try convert(o) }
        o = s.options()
        o.dequantize = true
        #expect(throws: ConvertError.quantizeAndDequantize) { try convert(o) }
        o = s.options(quantize: false)
        o.dequantize = true
        #expect(throws: ConvertError.notQuantized(directory: s.source.path)) { try convert(o) }
        try s.expectNothingWritten()
    }

    @Test func alreadyQuantized() throws {
        let s = try Scratch("phi4-bf16")
        defer { s.remove() }
        _ = try convert(s.options())
        var again = s.options()
        again.source = s.output.path
        again.output = s.work.appendingPathComponent("again").path
        #expect(throws: ConvertError.alreadyQuantized(directory: s.output.path, bits: 4)) {
            try convert(again)
        }
    }

    @Test func sourceIsNotFound() throws {
        let o = ConvertOptions(source: "/nonexistent/model", output: "/tmp/x", environment: [:])
        #expect {
            try convert(o)
        } throws: { error in (error as? any UserFacingError)?.exitCode == .noInput }
    }
}

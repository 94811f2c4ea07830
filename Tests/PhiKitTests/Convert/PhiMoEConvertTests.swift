import Foundation
import PhiEngine
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// phimoe through convert: the tiny Phi-3.5-MoE-shaped models of tiny_models.py, written in
/// the Hugging Face layout (one w1/w2/w3 tensor per expert), converted by phikit as float, at
/// two bit widths each, and (16 experts) mxfp4 and the mixed_3_6 recipe. Every output tensor must be byte-identical to mlx_lm.convert's
/// (which stacks the experts, mlx-lm's `sanitize`, and quantizes each expert's rows in its
/// own groups); then phikit runs the quantized model and its greedy tokens must follow the
/// float64 oracle of the stored weights (scripts/engine/make_phimoe_goldens.py): each token is
/// the oracle's argmax or within a near-tie (1e-3 of the logit spread) of it, after which the
/// contexts differ and the walk stops. `verify` passes both directories' tensors.
@Suite("phimoe: convert as mlx_lm.convert, quantized greedy as the float64 oracle")
struct PhiMoEConvertTests {
    static let golden: JSONValue = try! JSONValue(
        parsing: [UInt8](
            Data(
                contentsOf: TestPaths.repository.appendingPathComponent(
                    "Tests/PhiEngineTests/Fixtures/engine/tiny-phimoe.json"))))
    static let cases: [String] = ["phimoe16x2", "phimoe4x2", "phimoe16x2-seed11"].flatMap {
        model in
        (golden["models"]?[model]?["mlx"]?.arrayValue ?? []).indices.map { "\(model) \($0)" }
    }
    static let nearTie = 1e-3

    struct Step: Decodable {
        let top: [[Double]]  // (id, logit), best first
        let spread: Double
    }

    @Test(arguments: cases)
    func convertAndRun(_ name: String) throws {
        let parts = name.split(separator: " ").map(String.init)
        let model = try #require(Self.golden["models"]?[parts[0]])
        let variant = try #require(model["mlx"]?.arrayValue?[Int(parts[1])!])
        let work = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-phimoe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let source = work.appendingPathComponent("source")
        try Self.writeSource(
            config: try #require(model["config"]),
            seed: UInt64(try #require(model["seed"]?.intValue)), to: source)

        let output = work.appendingPathComponent("out")
        var options = ConvertOptions(source: source.path, output: output.path, environment: [:])
        if let o = variant["options"] {  // mlx_lm.convert's keyword arguments
            options.quantize = true
            options.bits = o["q_bits"]?.intValue
            options.groupSize = o["q_group_size"]?.intValue
            options.mode = o["q_mode"]?.stringValue ?? "affine"
            options.quantPredicate = o["quant_predicate"]?.stringValue.flatMap {
                MixedQuantRecipe(rawValue: $0)
            }
        }
        _ = try convert(options)
        let expected = try #require(variant["tensor_sha256"]?.objectValue)
        let written = try ModelWeights(directory: output.path)
        #expect(Set(written.tensorNames) == Set(expected.map(\.key)), "\(name): tensor names")
        for (tensor, hash) in expected {
            guard let (file, info) = written.tensor(tensor) else { continue }
            #expect(
                SHA256Hasher.hex(of: file.data(info)) == hash.stringValue, "\(name): \(tensor)")
        }

        // verify reads both layouts through the schema: tensor names, shapes (stacked experts
        // [experts, out, in], packed per expert) and dtypes all as config.json implies.
        for directory in [source, output] {
            let report = try verify(VerifyOptions(model: directory.path, environment: [:]))
            let model = report.layers.first { $0.layer == .model }
            #expect(model?.status == .passed, "\(name) \(directory.lastPathComponent): \(model?.summary ?? "")")
            #expect(!report.findings.contains { $0.layer == .model }, "\(report.findings)")
        }

        guard let greedy = variant["greedy"]?.arrayValue?.compactMap(\.intValue) else { return }
        let steps = try JSONDecoder().decode(
            [Step].self, from: Data(try #require(variant["steps"]).serialized().utf8))
        let prompt = try #require(variant["prompt"]?.arrayValue).compactMap(\.intValue)
        let session = try InferenceSession(
            model: try ModelArchitectures.load(directory: output.path))
        var logits = try session.prefill(prompt)
        var same = 0
        for i in 0..<greedy.count {
            var best = 0
            for j in logits.indices where logits[j] > logits[best] { best = j }
            if best != greedy[i] {
                let top = steps[i].top[0][1]
                let mine = steps[i].top.first { Int($0[0]) == best }?[1]
                #expect(
                    mine.map { top - $0 <= Self.nearTie * steps[i].spread } == true,
                    "\(name) token \(i): phikit \(best), oracle \(greedy[i]) \(steps[i].top.prefix(3))")
                break  // contexts differ from here on
            }
            same += 1
            logits = try session.step(best)
        }
        print("\(name): \(same) of \(greedy.count) greedy tokens equal the float64 oracle's")
    }

    /// The model's float32 weights from the seed, experts per expert (Hugging Face layout),
    /// with config.json and the bundled stories tokenizer (as the golden script's source).
    static func writeSource(config: JSONValue, seed: UInt64, to dir: URL) throws {
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        try Data(config.serialized().utf8).write(to: dir.appendingPathComponent("config.json"))
        for file in ["tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"] {
            try FileManager.default.copyItem(
                at: TestPaths.storiesModel.appendingPathComponent(file),
                to: dir.appendingPathComponent(file))
        }
        let c = try ModelConfig(data: Array(config.serialized().utf8), source: "config.json")
        let sizes = SeededWeights.PhiMoESizes(
            hidden: c.hiddenSize, intermediate: c.intermediateSize, layers: c.layerCount,
            heads: c.attentionHeads, kvHeads: c.kvHeads, vocab: c.vocabSize,
            experts: c.fields(PhiMoESchema.Fields.self).experts,
            attentionBias: c.fields(PhiMoESchema.Fields.self).attentionBias,
            lmHeadBias: c.fields(PhiMoESchema.Fields.self).lmHeadBias)
        let amplitude = Float(try #require(golden["amplitude"]?.doubleValue))
        let tensors = SeededWeights.splitExperts(
            SeededWeights.phimoe(sizes, seed: seed, amplitude: amplitude))
        let writer = try SafeTensorsWriter(
            path: dir.appendingPathComponent("model.safetensors").path,
            tensors: tensors.map { TensorSpec(name: $0.name, dtype: .f32, shape: $0.shape) },
            metadata: ["format": "pt"])
        for t in tensors { try t.values.withUnsafeBytes { try writer.write($0) } }
        try writer.finish()
    }
}

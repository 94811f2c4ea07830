import Foundation
import PhiFormats
import PhiKit
import Testing

/// `PhiKit.inspect` on small generated models: parameter counting (plain and MLX-quantized),
/// quantization detection, config summary, and the errors users see.
@Suite("PhiKit.inspect")
struct InspectTests {
    @Test func floatModel() throws {
        let dir = try InspectFixture.directory(
            config: InspectFixture.phi3Config(),
            tensors: [
                ("model.embed_tokens.weight", .bf16, [10, 8]), ("model.norm.weight", .bf16, [8]),
                ("lm_head.weight", .bf16, [10, 8]),
            ])
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let report = try PhiKit.inspect(path: dir)
        #expect(report.kind == .directory)
        #expect(
            report.tensors.map(\.name) == [
                "lm_head.weight", "model.embed_tokens.weight", "model.norm.weight",
            ])
        #expect(report.parameterCount == 168)
        #expect(report.tensorBytes == 336)
        #expect(report.dtypeBytes == ["BF16": 336])
        #expect(report.quantization == nil)
        #expect(report.config?.modelType == "phi3")
        #expect(report.config?.hiddenSize == 8)
        #expect(report.config?.headDim == 4)
        #expect(report.config?.ropeScaling == "longrope")
        #expect(report.config?.partialRotaryFactor == 0.5)
        #expect(report.config?.tieWordEmbeddings == true)
        #expect(report.metadata == ["format": "pt"])
        // A few tensors of a tied model: inspect says, in run's words, what run would refuse
        // (the missing layers) and ignore (the stray lm_head), and nothing else.
        #expect(report.warnings.allSatisfy { $0.hasPrefix("tensor '") })
        #expect(report.warnings.contains { $0.hasPrefix("tensor 'lm_head.weight' is not used") })
        #expect(
            report.warnings.contains {
                $0.hasPrefix("tensor 'model.layers.0.mlp.down_proj.weight' is missing")
            })
        #expect(report.files.map(\.tensorCount) == [3])
    }

    @Test("quantized weights count elements × 32 / bits", arguments: [2, 3, 4, 8])
    func quantized(bits: Int) throws {
        // One Linear 4 × 128, group 64: packed [4, 128·bits/32], scales/biases [4, 2].
        var config = InspectFixture.phi3Config()
        config["quantization"] = ["group_size": 64, "bits": bits]
        let dir = try InspectFixture.directory(
            config: config,
            tensors: [
                ("model.layers.0.mlp.down_proj.weight", .u32, [4, 128 * bits / 32]),
                ("model.layers.0.mlp.down_proj.scales", .bf16, [4, 2]),
                ("model.layers.0.mlp.down_proj.biases", .bf16, [4, 2]),
                ("model.norm.weight", .bf16, [8]),
            ])
        defer { try? FileManager.default.removeItem(atPath: dir) }

        let report = try PhiKit.inspect(path: dir)
        #expect(report.parameterCount == 4 * 128 + 8)
        let weight = try #require(report.tensors.first { $0.name.hasSuffix("down_proj.weight") })
        #expect(weight.quantizedBits == bits)
        #expect(report.tensors.first { $0.name.hasSuffix(".scales") }?.parameters == 0)
        let q = try #require(report.quantization)
        #expect(q.bits == bits && q.groupSize == 64 && q.mode == "affine")
        #expect(q.source == "config+tensors" && q.quantizedTensors == 1)
        // No quantization warning; only the tensors this one-layer sketch lacks.
        #expect(
            report.warnings.allSatisfy { $0.hasPrefix("tensor '") && $0.contains(" is missing") })
    }

    @Test func perLayerOverrideWins() throws {
        var config = InspectFixture.phi3Config()
        config["quantization"] = [
            "group_size": 64, "bits": 4,
            "model.layers.0.mlp.down_proj": ["bits": 8, "group_size": 64],
        ]
        let dir = try InspectFixture.directory(
            config: config,
            tensors: [
                ("model.layers.0.mlp.down_proj.weight", .u32, [4, 32]),
                ("model.layers.0.mlp.down_proj.scales", .bf16, [4, 2]),
                ("model.layers.0.mlp.down_proj.biases", .bf16, [4, 2]),
            ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let report = try PhiKit.inspect(path: dir)
        #expect(report.parameterCount == 4 * 128)
        #expect(report.tensors.first { $0.name.hasSuffix(".weight") }?.quantizedBits == 8)
    }

    @Test func quantizationDetectedWithoutConfigSaysSo() throws {
        let dir = try InspectFixture.directory(
            config: InspectFixture.phi3Config(),
            tensors: [
                ("lm_head.weight", .u32, [4, 16]),  // 4-bit at group 64: 128 columns, 2 groups
                ("lm_head.scales", .f16, [4, 2]),
                ("lm_head.biases", .f16, [4, 2]),
            ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let report = try PhiKit.inspect(path: dir)
        #expect(report.parameterCount == 512)
        #expect(report.quantization?.source == "tensors")
        #expect(report.quantization?.bits == 4)
        #expect(report.warnings.contains { $0.contains("assumed group size 64") })
    }

    @Test func singleFileReadsTheConfigBesideIt() throws {
        var config = InspectFixture.phi3Config()
        config["quantization"] = ["group_size": 32, "bits": 2]
        let dir = try InspectFixture.directory(
            config: config,
            tensors: [
                ("lm_head.weight", .u32, [4, 4]),  // 2-bit: 64 columns
                ("lm_head.scales", .bf16, [4, 2]),
                ("lm_head.biases", .bf16, [4, 2]),
            ])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let report = try PhiKit.inspect(path: dir + "/model.safetensors")
        #expect(report.kind == .file)
        #expect(report.parameterCount == 256)
    }

    @Test func directoryWithoutConfigStillInspects() throws {
        let dir = try InspectFixture.directory(config: nil, tensors: [("w", .f32, [3, 3])])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let report = try PhiKit.inspect(path: dir)
        #expect(report.config == nil)
        #expect(report.parameterCount == 9)
        #expect(report.warnings.contains { $0.contains("no config.json") })
    }

    @Test func jsonIsStableAndSnakeCase() throws {
        let dir = try InspectFixture.directory(
            config: InspectFixture.phi3Config(), tensors: [("w", .f32, [2])])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = try #require(
            JSONSerialization.jsonObject(
                with: encoder.encode(PhiKit.inspect(path: dir))) as? [String: Any])
        #expect(
            Set(json.keys) == [
                "schema_version", "path", "kind", "files", "tensors", "tensor_count",
                "parameter_count", "tensor_bytes", "dtype_bytes", "quantization",
                "config", "metadata", "warnings",
            ])
        #expect(json["quantization"] is NSNull)  // present as null, not omitted
        let tensor = try #require((json["tensors"] as? [[String: Any]])?.first)
        #expect(
            Set(tensor.keys) == [
                "name", "dtype", "shape", "bytes", "parameters", "file", "quantized_bits",
            ])
    }

    @Test func missingPath() throws {
        #expect(throws: InspectError.notFound(path: "/nonexistent/x")) {
            try PhiKit.inspect(path: "/nonexistent/x")
        }
        #expect(InspectError.notFound(path: "x").exitCode == .noInput)
    }

    @Test func truncatedFileIsDataError() throws {
        let dir = try InspectFixture.directory(config: nil, tensors: [("w", .f32, [64])])
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/model.safetensors"
        #expect(truncate(path, 40) == 0)
        do {
            _ = try PhiKit.inspect(path: path)
            Issue.record("expected an error")
        } catch let error as SafeTensorsError {
            #expect(error.exitCode == .dataError)
            #expect(error.message.contains(path))
        }
    }
}

/// Small model directories written with phikit's own SafeTensorsWriter (the CLI tests write
/// the bytes by hand instead, to check against the format itself).
private enum InspectFixture {
    static func phi3Config() -> [String: Any] {
        [
            "model_type": "phi3", "hidden_size": 8, "intermediate_size": 16, "num_hidden_layers": 1,
            "num_attention_heads": 2, "num_key_value_heads": 1, "vocab_size": 10,
            "partial_rotary_factor": 0.5, "tie_word_embeddings": true,
            "original_max_position_embeddings": 32, "max_position_embeddings": 64,
            "rope_scaling": ["type": "longrope", "short_factor": [1.0], "long_factor": [2.0]],
        ]
    }

    static func directory(
        config: [String: Any]?, tensors: [(String, DType, [Int])]
    ) throws
        -> String
    {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-inspect-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        if let config {
            try JSONSerialization.data(withJSONObject: config).write(
                to: URL(fileURLWithPath: dir + "/config.json"))
        }
        let specs = tensors.map { name, dtype, shape in
            (
                TensorSpec(name: name, dtype: dtype, shape: shape),
                [UInt8](repeating: 0, count: shape.reduce(1, *) * dtype.size)
            )
        }
        try SafeTensorsWriter.write(
            path: dir + "/model.safetensors", tensors: specs, metadata: ["format": "pt"])
        return dir
    }
}

import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// Model directories that cannot run: each load fails with one line naming the tensor, file
/// or field, and exit code 65 (bad model data); never a crash.
@Suite("model loading refuses bad directories")
struct LoadErrorTests {
    /// A tiny float (or 4-bit) model whose config.json `edit` changes.
    static func model(
        _ name: String = "tiny-phi35.json", quantized: Bool = false,
        edit: (inout JSONValue) -> Void = { _ in }
    ) throws -> TemporaryModel {
        let golden = try EngineGoldens.tiny(name)
        var dir = try TinyModels.writeFloat(
            config: golden.config, seed: golden.seed, amplitude: golden.amplitude)
        if quantized {
            dir = try TinyModels.writeQuantized(
                from: dir.path, quantization: golden.mlx[0].quantization)
        }
        let path = dir.file("config.json")
        var config = try JSONValue(parsing: [UInt8](Data(contentsOf: URL(fileURLWithPath: path))))
        edit(&config)
        try dir.write("config.json", config.serialized())
        return dir
    }

    /// Loads `dir` and returns the error it must throw.
    static func failure(_ dir: TemporaryModel) throws -> any UserFacingError {
        do {
            _ = try Phi3Model.load(directory: dir.path)
        } catch let error as any UserFacingError {
            #expect(!error.message.contains("\n"), "one line: \(error.message)")
            return error
        }
        Issue.record("loading \(dir.path) succeeded")
        throw CancellationError()
    }

    @Test("config.json sizes that do not match the tensors name the first tensor that differs")
    func shapeMismatch() throws {
        let vocabulary = try Self.failure(Self.model { $0.set("vocab_size", .int(500)) })
        #expect(
            vocabulary as? ModelError
                == .wrongShape(
                    name: "model.embed_tokens.weight", expected: [500, 128], found: [384, 128]))
        #expect(vocabulary.exitCode == .dataError)

        let wider = try Self.failure(Self.model { $0.set("intermediate_size", .int(512)) })
        #expect(
            wider.message
                == "tensor 'model.layers.0.mlp.gate_up_proj.weight' has shape [512, 128], expected [1024, 128] from config.json"
        )

        let deeper = try Self.failure(Self.model { $0.set("num_hidden_layers", .int(3)) })
        // The first tensor of layer 2 in the schema's (mlx's) order.
        #expect(deeper.message.contains("'model.layers.2.self_attn.qkv_proj.weight' is missing"))

        let shallower = try Self.failure(Self.model { $0.set("num_hidden_layers", .int(1)) })
        #expect(shallower.message.contains("'model.layers.1."))
        #expect(shallower.message.contains("not part of the model"))

        let untied = try Self.failure(
            Self.model("tiny-phi4mini.json") { $0.set("tie_word_embeddings", .bool(false)) })
        #expect(untied.message.contains("'lm_head.weight' is missing"))
    }

    @Test("another architecture is refused naming its model_type")
    func unsupportedArchitecture() throws {
        let error = try Self.failure(Self.model { $0.set("model_type", .string("gemma")) })
        #expect(error.message.contains("model_type 'gemma' is not supported"))
        #expect(error.exitCode == .dataError)
    }

    @Test("an index naming a shard that is not there is an incomplete model")
    func missingShard() throws {
        let dir = try Self.model()
        let names = try ModelWeights(directory: dir.path).tensorNames
        try FileManager.default.moveItem(
            atPath: dir.file("model.safetensors"),
            toPath: dir.file("model-00001-of-00002.safetensors"))
        var map = JSONValue.object([])
        for (i, name) in names.enumerated() {
            map.set(name, .string("model-0000\(i == 0 ? 2 : 1)-of-00002.safetensors"))
        }
        let index = JSONValue.object([("metadata", .object([])), ("weight_map", map)])
        try dir.write("model.safetensors.index.json", index.serialized())
        let error = try Self.failure(dir)
        #expect(error.message.contains("model-00002-of-00002.safetensors"))
        #expect(error.exitCode == .dataError)
    }

    @Test("packed weights the config does not describe are refused naming the tensor")
    func quantizationMismatch() throws {
        let unannounced = try Self.failure(
            Self.model(quantized: true) {
                $0.set("quantization", nil)
                $0.set("quantization_config", nil)
            })
        #expect(
            unannounced.message
                == "quantized tensor 'model.embed_tokens.weight': has scales, but config.json has no 'quantization'"
        )
        let wrongBits = try Self.failure(
            Self.model(quantized: true) {
                $0.set("quantization", .object([("group_size", .int(64)), ("bits", .int(8))]))
            })
        #expect(
            wrongBits as? ModelError
                == .wrongShape(
                    name: "model.embed_tokens.weight", expected: [384, 32], found: [384, 16]))
    }
}

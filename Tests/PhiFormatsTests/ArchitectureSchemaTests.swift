import Foundation
import Testing

@testable import PhiFormats

/// The Phi-3 schema (module names, shapes, kinds and mlx order), the registry, per-module
/// quantization, and the tensor-set check with its leftover policy, on names alone.
@Suite struct ArchitectureSchemaTests {
    /// 1 layer, hidden 8, 2 heads, vocab 10.
    static func tiny(tied: Bool) -> ModelConfig {
        ModelConfig(
            hiddenSize: 8, intermediateSize: 16, layerCount: 1, attentionHeads: 2,
            vocabSize: 10, tieWordEmbeddings: tied)
    }

    /// The tensors of a float checkpoint of `config`.
    static func names(_ config: ModelConfig) throws -> [String] {
        try ModelLayout(config: config).modules.map(\.weightName)
    }

    @Test func phi35ModulesMatchTheRealIndex() throws {
        let config = try ModelConfig.load(directory: SharedFixtures.phi35)
        let layout = try ModelLayout(config: config)
        let index = try ShardIndex(directory: SharedFixtures.phi35)
        #expect(layout.modules.count == 195)
        #expect(Set(layout.modules.map(\.weightName)) == Set(index.weightMap.keys))
        let check = layout.check(tensorNames: index.weightMap.keys)
        #expect(check.isAcceptable && check.ignored.isEmpty && check.packedModules.isEmpty)
        let shapes = Dictionary(uniqueKeysWithValues: layout.modules.map { ($0.path, $0.shape) })
        #expect(shapes["model.embed_tokens"] == [32064, 3072])
        #expect(shapes["model.layers.0.self_attn.qkv_proj"] == [9216, 3072])
        #expect(shapes["model.layers.31.self_attn.o_proj"] == [3072, 3072])
        #expect(shapes["model.layers.5.mlp.gate_up_proj"] == [16384, 3072])
        #expect(shapes["model.layers.5.mlp.down_proj"] == [3072, 8192])
        #expect(shapes["model.layers.5.input_layernorm"] == [3072])
        #expect(shapes["model.norm"] == [3072])
        #expect(shapes["lm_head"] == [32064, 3072])
    }

    @Test func phi4MiniIsTiedWithGroupedQueries() throws {
        let config = try ModelConfig.load(directory: SharedFixtures.phi4MiniMLX4bit)
        let layout = try ModelLayout(config: config)
        #expect(layout.modules.count == 1 + 32 * 6 + 1)  // tied: no lm_head
        #expect(layout["lm_head"] == nil)
        #expect(layout["model.layers.0.self_attn.qkv_proj"]?.shape == [5120, 3072])  // (24+2*8)*128
        #expect(layout["model.layers.0.self_attn.o_proj"]?.shape == [3072, 3072])
        #expect(layout["model.embed_tokens"]?.shape == [200064, 3072])
    }

    @Test("modules come in mlx's parameter order, Linear/Embedding quantizable, norms not")
    func mlxOrderAndKinds() throws {
        let layout = try ModelLayout(config: Self.tiny(tied: false))
        #expect(
            layout.modules.map(\.path) == [
                "model.embed_tokens", "model.layers.0.self_attn.qkv_proj",
                "model.layers.0.self_attn.o_proj", "model.layers.0.mlp.gate_up_proj",
                "model.layers.0.mlp.down_proj", "model.layers.0.input_layernorm",
                "model.layers.0.post_attention_layernorm", "model.norm", "lm_head",
            ])
        #expect(
            layout.modules.map(\.kind) == [
                .embedding, .linear, .linear, .linear, .linear, .norm, .norm, .norm, .linear,
            ])
        #expect(
            layout.modules.map(\.isQuantizable)
                == [true, true, true, true, true, false, false, false, true])
        #expect(layout.modules.allSatisfy { !$0.hasBias })
        let qkv = layout.module("model.layers.0.self_attn.qkv_proj")
        #expect(qkv.shape == [24, 8])
        #expect(
            qkv.tensorNames(quantized: true).map { $0.split(separator: ".").last! } == [
                "weight", "scales", "biases",
            ])
    }

    @Test func registryKnowsEachArchitectureOnce() throws {
        #expect(Architectures.modelTypes == ["llama", "phi", "phi3", "phimoe"])
        #expect(Architectures.schema(for: "llama") is LlamaSchema)
        #expect(Architectures.schema(for: "phi") is PhiSchema)
        #expect(Architectures.schema(for: "phimoe") is PhiMoESchema)
        #expect(Architectures.schema(for: "phi3") is Phi3Schema)
        var gemma = Self.tiny(tied: true)
        gemma.modelType = "gemma"
        #expect(
            throws: ConfigError.unsupportedArchitecture(path: "config.json", modelType: "gemma")
        ) {
            try ModelLayout(config: gemma)
        }
        #expect(
            ConfigError.unsupportedArchitecture(path: "", modelType: "gemma").hint?
                .contains("\"phi3\"") == true)
    }

    @Test("per-module quantization: the module's own entry, else the default; never a norm")
    func quantizationPerModule() throws {
        var config = Self.tiny(tied: false)
        config.quantization = QuantizationConfig(
            groupSize: 64, bits: 4,
            overrides: [
                "model.layers.0.mlp.down_proj": .quantized(groupSize: 32, bits: 8, mode: "affine"),
                "lm_head": .notQuantized,
            ])
        let layout = try ModelLayout(config: config)
        #expect(
            layout.quantization(of: layout.module("model.layers.0.self_attn.qkv_proj"))
                == .quantized(groupSize: 64, bits: 4, mode: "affine"))
        #expect(
            layout.quantization(of: layout.module("model.layers.0.mlp.down_proj"))
                == .quantized(groupSize: 32, bits: 8, mode: "affine"))
        #expect(layout.quantization(of: layout.module("lm_head")) == .notQuantized)
        #expect(layout.quantization(of: layout.module("model.norm")) == .notQuantized)
        let float = try ModelLayout(config: Self.tiny(tied: false))
        #expect(float.quantization(of: float.module("lm_head")) == .notQuantized)
    }

    @Test("a tied model's stray lm_head.weight is ignored; an untied model needs it")
    func tiedOutputHead() throws {
        let tied = try ModelLayout(config: Self.tiny(tied: true))
        let check = tied.check(
            tensorNames: try Self.names(Self.tiny(tied: true)) + ["lm_head.weight"])
        #expect(check.isAcceptable)
        #expect(check.ignored.map(\.name) == ["lm_head.weight"])
        #expect(check.ignored.map(\.reason) == [.tiedOutputHead])

        let untied = try ModelLayout(config: Self.tiny(tied: false))
        let missing = untied.check(tensorNames: try Self.names(Self.tiny(tied: true)))
        #expect(missing.missing == ["lm_head.weight"])
        // Only the weight: a tied model's packed head is not something loaders drop.
        let packed = tied.check(
            tensorNames: try Self.names(Self.tiny(tied: true)) + [
                "lm_head.weight", "lm_head.scales",
            ])
        #expect(packed.unexpected == ["lm_head.scales"])
    }

    @Test("rotary inv_freq buffers are ignored wherever old checkpoints put them")
    func rotaryBuffers() throws {
        let config = Self.tiny(tied: true)
        let buffers = [
            "model.layers.0.self_attn.rotary_emb.inv_freq", "model.rotary_emb.inv_freq",
        ]
        let check = try ModelLayout(config: config).check(
            tensorNames: try Self.names(config) + buffers)
        #expect(check.isAcceptable)
        #expect(check.ignored.map(\.name) == buffers.sorted())
        #expect(check.ignored.allSatisfy { $0.reason == .rotaryBuffer })
        let lookalike = try ModelLayout(config: config).check(
            tensorNames: try Self.names(config) + [
                "model.layers.0.self_attn.my_rotary_emb.inv_freq"
            ])
        #expect(lookalike.unexpected == ["model.layers.0.self_attn.my_rotary_emb.inv_freq"])
    }

    @Test("foreign and missing tensors give the same errors to every caller")
    func foreignAndMissing() throws {
        let config = Self.tiny(tied: true)
        let layout = try ModelLayout(config: config)
        var names = try Self.names(config).filter { $0 != "model.layers.0.mlp.down_proj.weight" }
        names.append("model.layers.0.foo.weight")
        let check = layout.check(tensorNames: names)
        #expect(check.missing == ["model.layers.0.mlp.down_proj.weight"])
        #expect(check.unexpected == ["model.layers.0.foo.weight"])
        let errors = check.errors(directory: "/m") { _ in "/m/model.safetensors" }
        #expect(
            errors == [
                .missingTensor(name: "model.layers.0.mlp.down_proj.weight", directory: "/m"),
                .unexpectedTensor(name: "model.layers.0.foo.weight", file: "/m/model.safetensors"),
            ])
        #expect(
            errors[1].message
                == "tensor 'model.layers.0.foo.weight' in /m/model.safetensors is not part of "
                + "the model config.json describes")
        #expect(errors.allSatisfy { $0.exitCode == .dataError })
        #expect(throws: errors[0]) {
            try check.requireAcceptable(directory: "/m") { _ in nil }
        }
    }

    @Test("a packed module needs its scales and biases; a norm cannot be packed")
    func packedModules() throws {
        let config = Self.tiny(tied: true)
        let layout = try ModelLayout(config: config)
        let check = layout.check(
            tensorNames: try Self.names(config) + [
                "model.layers.0.mlp.down_proj.scales", "model.norm.scales",
            ])
        #expect(check.packedModules == ["model.layers.0.mlp.down_proj"])
        #expect(check.missing == ["model.layers.0.mlp.down_proj.biases"])
        #expect(check.unexpected == ["model.norm.scales"])
    }
}

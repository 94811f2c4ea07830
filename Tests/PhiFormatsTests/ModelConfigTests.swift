import Foundation
import Testing

@testable import PhiFormats

private var phi35Dir: String { get throws { try SharedFixtures.phi35 } }
private var phi4Q4Dir: String { get throws { try SharedFixtures.phi4MiniMLX4bit } }

/// The Phi-3.5 config.json with `edit` applied, as bytes.
private func editedPhi35(_ edit: (inout JSONValue) -> Void) throws -> [UInt8] {
    var json = try JSONValue(
        parsing: Array(
            try #require(FileManager.default.contents(atPath: phi35Dir + "/config.json"))))
    edit(&json)
    return Array(json.serialized().utf8)
}

private func decodeError(_ bytes: [UInt8]) -> ConfigError? {
    do {
        _ = try ModelConfig(data: bytes, source: "config.json")
        return nil
    } catch {
        return error
    }
}

@Suite struct ModelConfigTests {
    @Test func decodesPhi35() throws {
        let c = try ModelConfig.load(directory: phi35Dir)
        #expect(c.modelType == "phi3")
        #expect(c.source.hasSuffix("microsoft--Phi-3.5-mini-instruct/config.json"))
        #expect((c.hiddenSize, c.intermediateSize, c.layerCount) == (3072, 8192, 32))
        #expect((c.attentionHeads, c.kvHeads, c.vocabSize) == (32, 32, 32064))
        #expect((c.headDim, c.ropeDim, c.partialRotaryFactor) == (96, 96, 1.0))
        #expect((c.ropeTheta, c.rmsNormEps) == (10000, 1e-5))
        #expect(c.maxPositionEmbeddings == 131072 && c.originalMaxPositionEmbeddings == 4096)
        let rope = try #require(c.ropeScaling)
        #expect(rope.type == "longrope" && rope.isLongRope)
        #expect(rope.longFactor.count == 48 && rope.shortFactor.count == 48)
        #expect(
            rope.longFactor.first == 1.0800000429153442 && rope.longFactor.last == 64.83999633789062
        )
        #expect(rope.shortFactor.first == 1.0 && rope.shortFactor.last == 2.8399994373321533)
        #expect(!c.tieWordEmbeddings)
        #expect(c.eosTokenIds == [32000] && c.bosTokenId == 1)
        #expect(c.torchDType == .bf16)
        #expect(c.quantization == nil && c.foreignQuantMethod == nil)
        #expect(c.slidingWindow == 262144)
    }

    @Test func phi35GenerationConfig() throws {
        let g = try #require(try GenerationConfig.load(directory: phi35Dir))
        #expect(g.eosTokenIds == [32007, 32001, 32000])
        #expect(g.bosTokenId == 1)
        #expect(g.temperature == nil && g.doSample == nil)
        #expect(try GenerationConfig.load(directory: phi4Q4Dir) == nil)  // no such file: optional
    }

    @Test func decodesPhi4Mini4Bit() throws {
        let c = try ModelConfig.load(directory: phi4Q4Dir)
        #expect((c.attentionHeads, c.kvHeads, c.headDim) == (24, 8, 128))
        #expect(c.partialRotaryFactor == 0.75 && c.ropeDim == 96)
        #expect(c.tieWordEmbeddings)
        #expect(c.vocabSize == 200064)
        #expect(c.eosTokenIds == [200020] && c.bosTokenId == 199999)
        #expect(c.quantization == QuantizationConfig(groupSize: 64, bits: 4, mode: "affine"))
        let rope = try #require(c.ropeScaling)
        #expect(
            rope.longFactor.count == 48 && rope.longFactor.first == 1
                && rope.longFactor.last == 47.77)
    }

    @Test func missingConfigIsNoInput() {
        #expect(throws: ConfigError.missingFile(path: "/nonexistent-dir/config.json")) {
            try ModelConfig.load(directory: "/nonexistent-dir")
        }
        let error = ConfigError.missingFile(path: "x")
        #expect(error.exitCode == .noInput)
    }

    static let invalidCases: [(String, String, @Sendable (inout JSONValue) -> Void)] = [
        (
            "num_attention_heads", "must divide hidden_size",
            { $0.set("num_attention_heads", .int(7)) }
        ),
        (
            "num_key_value_heads", "must divide num_attention_heads",
            { $0.set("num_key_value_heads", .int(5)) }
        ),
        (
            "rope_scaling.long_factor", "has 47 entries, expected 48",
            { json in
                var rope = json["rope_scaling"]!
                rope.set("long_factor", .array(Array(rope["long_factor"]!.arrayValue!.dropLast())))
                json.set("rope_scaling", rope)
            }
        ),
        (
            "rope_scaling.short_factor", "has 49 entries",
            { json in
                var rope = json["rope_scaling"]!
                rope.set("short_factor", .array(rope["short_factor"]!.arrayValue! + [.int(1)]))
                json.set("rope_scaling", rope)
            }
        ),
        ("hidden_size", "must be a number", { $0.set("hidden_size", .string("3072")) }),
        ("vocab_size", "must be positive", { $0.set("vocab_size", .int(0)) }),
        // Found by scripts/fuzz: sizes near Int.max used to overflow in ropeDim and the
        // tensor shapes (now Phi3Schema.modules) instead of being refused.
        ("hidden_size", "more than phikit supports", { $0.set("hidden_size", .int(Int.max)) }),
        (
            "intermediate_size", "more than phikit supports",
            { $0.set("intermediate_size", .int(1 << 62)) }
        ),
        (
            "num_hidden_layers", "more than phikit supports",
            { $0.set("num_hidden_layers", .int(1_000_000_000_000)) }
        ),
        (
            "partial_rotary_factor", "odd or empty rotary dimension",
            {
                $0.set("partial_rotary_factor", .double(0.01))
            }
        ),
        (
            "rope_scaling.type", "'yarn' is not supported",
            { json in
                var rope = json["rope_scaling"]!
                rope.set("type", .string("yarn"))
                json.set("rope_scaling", rope)
            }
        ),
        ("eos_token_id", "outside the vocabulary", { $0.set("eos_token_id", .int(40000)) }),
        (
            "quantization.bits", "must be 2, 3, 4, 5, 6 or 8",
            {
                $0.set("quantization", .object([("group_size", .int(64)), ("bits", .int(7))]))
            }
        ),
        (
            "quantization_config.quant_method", "'gptq' is not supported",
            {
                $0.set(
                    "quantization_config",
                    .object([
                        ("bits", .int(4)), ("group_size", .int(128)),
                        ("quant_method", .string("gptq")),
                    ]))
            }
        ),
    ]

    @Test(arguments: 0..<invalidCases.count)
    func invalidValueNamesItsField(_ i: Int) throws {
        let (field, detail, edit) = Self.invalidCases[i]
        let error = try #require(decodeError(try editedPhi35(edit)))
        guard case .invalidValue(let path, let got, _) = error else {
            Issue.record("expected invalidValue(\(field)), got \(error)")
            return
        }
        #expect(path == "config.json")
        #expect(got == field)
        #expect(error.message.hasPrefix("config.json: field '\(field)' "))
        #expect(error.message.contains(detail), "\(error.message)")
        #expect(error.exitCode == .dataError)
    }

    @Test func wrongTypeMessage() throws {
        let error = try #require(
            decodeError(try editedPhi35 { $0.set("hidden_size", .string("3072")) }))
        #expect(error.message == "config.json: field 'hidden_size' must be a number")
    }

    @Test(arguments: [
        ("hidden_size", ["hidden_size"]),
        ("model_type", ["model_type"]),
        ("rope_scaling.long_factor", ["rope_scaling", "long_factor"]),
    ])
    func missingFieldNamesItsPath(_ expected: String, _ keys: [String]) throws {
        let bytes = try editedPhi35 { json in
            if keys.count == 1 {
                json.set(keys[0], nil)
            } else {
                var inner = json[keys[0]]!
                inner.set(keys[1], nil)
                json.set(keys[0], inner)
            }
        }
        let error = try #require(decodeError(bytes))
        #expect(error == .missingField(path: "config.json", field: expected))
        #expect(error.message == "config.json: missing field '\(expected)'")
    }

    @Test func unsupportedArchitecture() throws {
        let error = try #require(
            decodeError(try editedPhi35 { $0.set("model_type", .string("gemma")) }))
        #expect(error == .unsupportedArchitecture(path: "config.json", modelType: "gemma"))
        #expect(error.message.contains("'gemma'"))
        #expect(error.exitCode == .dataError)
        // Decoding without validation still works, for tools that report rather than refuse.
        let c = try ModelConfig(
            data: try editedPhi35 { $0.set("model_type", .string("gemma")) }, source: "config.json",
            validating: false)
        #expect(c.modelType == "gemma")
    }

    @Test func wrongTypeInsideAListNamesThePosition() throws {
        let bytes = try editedPhi35 { json in
            var rope = json["rope_scaling"]!
            var list = rope["long_factor"]!.arrayValue!
            list[3] = .string("x")
            rope.set("long_factor", .array(list))
            json.set("rope_scaling", rope)
        }
        #expect(
            decodeError(bytes)?.message
                == "config.json: field 'rope_scaling.long_factor[3]' must be a number")
    }

    @Test func generationConfigVariants() throws {
        let one = try GenerationConfig(
            data: Array(
                #"{"eos_token_id": 7, "temperature": 0.6, "top_k": 40, "do_sample": true}"#.utf8),
            source: "g")
        #expect(
            one == GenerationConfig(eosTokenIds: [7], temperature: 0.6, topK: 40, doSample: true))
        let none = try GenerationConfig(data: Array(#"{"eos_token_id": null}"#.utf8), source: "g")
        #expect(none.eosTokenIds.isEmpty)
        #expect(
            throws: ConfigError.invalidValue(
                path: "g", field: "eos_token_id", detail: "must be an integer or a list of integers"
            )
        ) {
            try GenerationConfig(data: Array(#"{"eos_token_id": "x"}"#.utf8), source: "g")
        }
    }

    @Test func notJSON() {
        guard case .invalidJSON(let path, _)? = decodeError(Array("{\"model_type\": ".utf8)) else {
            Issue.record("expected invalidJSON")
            return
        }
        #expect(path == "config.json")
    }

    @Test func leniencyAndAlternateSpellings() throws {
        // transformers 5: `dtype`, rope theta inside `rope_parameters`; eos as a list; no kv heads.
        let json = """
            {"model_type": "phi3", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
             "num_attention_heads": 4, "vocab_size": 100, "dtype": "float16", "eos_token_id": [3, 4],
             "rope_parameters": {"rope_type": "default", "rope_theta": 250000.0}, "rope_scaling": null,
             "quantization_config": {"group_size": 32, "bits": 8}}
            """
        let c = try ModelConfig(data: Array(json.utf8), source: "config.json")
        #expect(c.kvHeads == 4 && c.headDim == 16 && c.ropeDim == 16)
        #expect(c.torchDType == .f16)
        #expect(c.eosTokenIds == [3, 4] && c.bosTokenId == nil)
        #expect(c.ropeTheta == 250000 && c.ropeScaling == nil)
        #expect(c.rmsNormEps == 1e-5 && c.maxPositionEmbeddings == 4096 && !c.tieWordEmbeddings)
        #expect(c.quantization == QuantizationConfig(groupSize: 32, bits: 8))
    }

    @Test func quantizationOverrides() throws {
        let json = """
            {"group_size": 64, "bits": 4, "mode": "affine",
             "model.layers.0.mlp.down_proj": {"group_size": 64, "bits": 8},
             "lm_head": false, "model.embed_tokens": {"bits": 6}}
            """
        let q = try JSONDecoder().decode(QuantizationConfig.self, from: Data(json.utf8))
        #expect(q.overrides.count == 3)
        #expect(
            q.layer("model.layers.0.mlp.down_proj")
                == .quantized(groupSize: 64, bits: 8, mode: "affine"))
        #expect(q.layer("lm_head") == .notQuantized)
        #expect(q.layer("model.embed_tokens") == .quantized(groupSize: 64, bits: 6, mode: "affine"))
        #expect(
            q.layer("model.layers.1.mlp.down_proj")
                == .quantized(groupSize: 64, bits: 4, mode: "affine"))
    }

    @Test func linearRopeNeedsFactor() throws {
        let bytes = try editedPhi35 {
            $0.set("rope_scaling", .object([("type", .string("linear"))]))
        }
        #expect(
            decodeError(bytes) == .missingField(path: "config.json", field: "rope_scaling.factor"))
        let ok = try editedPhi35 {
            $0.set(
                "rope_scaling", .object([("type", .string("linear")), ("factor", .double(2.0))]))
        }
        #expect(decodeError(ok) == nil)
    }

    @Test func memberwiseTinyConfigsValidate() throws {
        let tiny = ModelConfig(
            hiddenSize: 64, intermediateSize: 96, layerCount: 2, attentionHeads: 4, kvHeads: 2,
            vocabSize: 50, partialRotaryFactor: 0.75,
            ropeScaling: RopeScaling(
                type: "longrope", shortFactor: Array(repeating: 1, count: 6),
                longFactor: Array(repeating: 2, count: 6)),
            tieWordEmbeddings: true)
        try tiny.validate()
        #expect(tiny.ropeDim == 12)
    }
}

import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// The real stories260K.gguf (llama architecture, f32, llama.cpp's CI model), converted to the
/// llama layout, against the same model converted independently from llama2.c's files into
/// the phi3 layout.
@Suite struct GGUFStoriesTests {
    static var gguf: String { get throws { try TestPaths.shared("karpathy--tinyllamas/stories260K.gguf") } }
    static var phi3: String { get throws { try TestPaths.shared("karpathy--stories260K-phi3") } }

    static func converted() throws -> URL {
        let dir = try ConvertFixtures.temporaryDirectory("gguf-stories")
        let out = dir.appendingPathComponent("model").path
        var options = ConvertOptions(source: try gguf, output: out)
        options.exact = true
        let summary = try convertGGUF(options)
        #expect(summary.inexact.isEmpty)
        #expect(summary.exactTypes == ["F32": 48])
        return URL(fileURLWithPath: out)
    }

    /// The GGUF converts to the llama layout; the reference is phi3's, whose fused modules
    /// stack the llama ones' rows (q, k, v; gate, up). Every value equal, byte for byte.
    @Test func tensorsEqualTheReferenceConversion() throws {
        let out = try Self.converted()
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let mine = try SafeTensorsFile(path: out.path + "/model.safetensors")
        let reference = try SafeTensorsFile(path: try Self.phi3 + "/model.safetensors")
        let fused = ["self_attn.qkv_proj": ["q_proj", "k_proj", "v_proj"], "mlp.gate_up_proj": ["gate_proj", "up_proj"]]
        var expected: Set<String> = []
        for t in reference.tensors {
            var names = [t.name]
            for (module, parts) in fused where t.name.hasSuffix(module + ".weight") {
                let prefix = t.name.dropLast((module + ".weight").count)
                    + module.split(separator: ".")[0] + "."
                names = parts.map { prefix + $0 + ".weight" }
            }
            expected.formUnion(names)
            let infos = try names.map { try #require(mine.info($0), "\($0) is missing") }
            #expect(infos.allSatisfy { $0.dtype == t.dtype && $0.shape.count == t.shape.count }, "\(t.name)")
            #expect(infos.reduce(0) { $0 + $1.shape[0] } == t.shape[0], "\(t.name) rows")
            #expect(infos.flatMap { Array(mine.data($0)) } == Array(reference.data(t)), "\(t.name) differs")
        }
        #expect(Set(mine.tensors.map(\.name)) == expected)
    }

    @Test func configAndTokenizerMatch() throws {
        let out = try Self.converted()
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        func json(_ path: String) throws -> JSONValue {
            try JSONValue(parsing: [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
        }
        // tokenizer.json: every key equal to the reference's (vocabulary, merges, normalizer,
        // decoder, post-processor, added tokens).
        let mine = try json(out.path + "/tokenizer.json")
        let reference = try json(try Self.phi3 + "/tokenizer.json")
        for member in reference.objectValue! {
            #expect(mine[member.key] == member.value, "tokenizer.json '\(member.key)'")
        }
        let config = try ModelConfig.load(directory: out.path)
        let want = try ModelConfig.load(directory: try Self.phi3)
        #expect(config.modelType == "llama" && want.modelType == "phi3")
        #expect(config.hiddenSize == want.hiddenSize && config.layerCount == want.layerCount)
        #expect(config.kvHeads == want.kvHeads && config.tieWordEmbeddings)
        #expect(config.intermediateSize == want.intermediateSize)
        // The GGUF says context 2048 where llama2.c trained with 512: the metadata wins.
        #expect(config.maxPositionEmbeddings == 2048)
        let generation = try json(out.path + "/generation_config.json")
        #expect(generation["bos_token_id"] == .int(1) && generation["eos_token_id"] == .int(2))
    }
}

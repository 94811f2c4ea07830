import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// The real stories260K.gguf (llama architecture, f32, llama.cpp's CI model) against the same
/// model converted independently from llama2.c's files into the phi3 layout.
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

    @Test func tensorsEqualTheReferenceConversion() throws {
        let out = try Self.converted()
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        let mine = try SafeTensorsFile(path: out.path + "/model.safetensors")
        let reference = try SafeTensorsFile(path: try Self.phi3 + "/model.safetensors")
        #expect(Set(mine.tensors.map(\.name)) == Set(reference.tensors.map(\.name)))
        for t in reference.tensors {
            let m = try #require(mine.info(t.name))
            #expect(m.dtype == t.dtype && m.shape == t.shape, "\(t.name)")
            #expect(Array(mine.data(m)) == Array(reference.data(t)), "\(t.name) differs")
        }
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
        #expect(config.hiddenSize == want.hiddenSize && config.layerCount == want.layerCount)
        #expect(config.kvHeads == want.kvHeads && config.tieWordEmbeddings)
        #expect(config.intermediateSize == want.intermediateSize)
        // The GGUF says context 2048 where llama2.c trained with 512: the metadata wins.
        #expect(config.maxPositionEmbeddings == 2048)
        let generation = try json(out.path + "/generation_config.json")
        #expect(generation["bos_token_id"] == .int(1) && generation["eos_token_id"] == .int(2))
    }
}

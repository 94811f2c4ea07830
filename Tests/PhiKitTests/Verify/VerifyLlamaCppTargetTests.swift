import Foundation
import PhiFormats
import PhiText
import TestSupport
import Testing

@testable import PhiKit

/// `verify --target llama.cpp` (LlamaCppFacts, read from llama.cpp b11434's sources): what
/// convert_hf_to_gguf.py and llama.cpp need, on the bundled and tiny models. The pre-tokenizer
/// identifiers are the tokenizers library's, as transformers 4.57.6 (which llama.cpp pins)
/// computes them (scripts/verify/llamacpp_chkhsh.py): Phi-4-mini's is gpt-4o. By hand, a converted
/// SmolLM2-135M-Instruct gives 855059…6249, which llama.cpp names smollm, and its float copy
/// converts with convert_hf_to_gguf.py to a GGUF of tokenizer.ggml.pre smollm.
@Suite("verify --target llama.cpp")
struct VerifyLlamaCppTargetTests {
    static func check(_ dir: URL) -> LayerOutcome {
        var check = TargetCheck(directory: dir.path, targets: [.llamaCpp], fix: false)
        return check.run()
    }

    /// A writable copy of stories-260k with config.json edited.
    static func stories(in work: URL, edit: (inout [String: Any]) -> Void) throws -> URL {
        let dir = work.appendingPathComponent("stories")
        try FileManager.default.copyItem(at: TestPaths.storiesModel, to: dir)
        let url = dir.appendingPathComponent("config.json")
        var config = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        edit(&config)
        try JSONSerialization.data(withJSONObject: config).write(to: url)
        return dir
    }

    @Test(arguments: [
        ("karpathy--stories260K-phi3", "bc8c6e97e62e12dff25cb8a572945996f65b146009ed77446f629dcc76b2256c"),
        ("microsoft--Phi-3.5-mini-instruct", "dc16e3392bb0c1104ff50681cb9a023673e19b095a332a5a6ba7a944363eb1cf"),
        ("_derived/microsoft--Phi-4-mini-instruct", "ccc2ef013c104be7bae2965776d611e1d7a8a2a9c547dd93a682c9a9fc80352e"),
    ])
    func preTokenizerHashIsTransformers(_ fixture: String, _ expected: String) throws {
        let tokenizer = try Tokenizer.load(directory: try TestPaths.shared(fixture))
        #expect(try LlamaCppCheck.preTokenizerHash(tokenizer) == expected)
    }

    /// stories-260k (phi3, LlamaTokenizer) has no tokenizer.model: the phi3 converter stops.
    @Test func sentencePieceVocabularyNeedsTokenizerModel() throws {
        let outcome = Self.check(TestPaths.storiesModel)
        #expect(outcome.findings.map(\.code) == ["target_tokenizer"])
        #expect(outcome.findings[0].file == "tokenizer.model")
    }

    /// The same weights and tokenizer as a Llama: a BPE tokenizer.json with byte fallback and
    /// a Sequence decoder is read as llama's own vocabulary, so it passes.
    @Test func llamaHFVocabularyPasses() throws {
        let work = try ConvertFixtures.temporaryDirectory("llamacpp-llama")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.stories(in: work) {
            $0["model_type"] = "llama"
            $0["architectures"] = ["LlamaForCausalLM"]
        }
        let outcome = Self.check(dir)
        #expect(outcome.result.status == .passed, "\(outcome.findings)")
        #expect(outcome.summary.contains("llama.cpp b11434"))
    }

    @Test func architectureMissingOrForeign() throws {
        let work = try ConvertFixtures.temporaryDirectory("llamacpp-arch")
        defer { try? FileManager.default.removeItem(at: work) }
        let missing = try Self.stories(in: work) { $0["architectures"] = nil }
        let finding = try #require(Self.check(missing).findings.first)
        #expect(finding.code == "target_architecture")
        #expect(finding.hint?.contains("Phi3ForCausalLM") == true)
        try FileManager.default.removeItem(at: missing)
        let foreign = try Self.stories(in: work) { $0["architectures"] = ["PhiForCausalLM"] }
        let mismatch = Self.check(foreign).findings.first { $0.code == "target_architecture" }
        #expect(mismatch?.message.contains("converts as phi2") == true)
    }

    /// An MLX 4-bit Phi-4-mini-shaped model: the converter cannot map .scales; its GPT2
    /// vocabulary is gpt-4o's pre-tokenizer; <|end|> is one of llama.cpp's own end tokens, so
    /// (unlike for MLX Swift) no end-token finding.
    @Test func quantizedPhi4MiniShape() throws {
        let dir = try ConvertGoldenCase(name: "phi4-bf16-q4g64").prepareOutput()
        let outcome = Self.check(dir)
        #expect(outcome.findings.map(\.code) == ["target_quantization"])
        #expect(outcome.summary.contains("general.architecture phi3, tokenizer.ggml.pre gpt-4o"))
    }

    /// A BPE vocabulary whose identifier llama.cpp does not list stops the converter.
    @Test func unknownPreTokenizer() throws {
        let work = try ConvertFixtures.temporaryDirectory("llamacpp-pre")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.stories(in: work) {
            $0["model_type"] = "phi"
            $0["architectures"] = ["PhiForCausalLM"]
        }
        let finding = Self.check(dir).findings.first { $0.code == "target_pre_tokenizer" }
        #expect(finding?.message.contains("bc8c6e97e62e12dff25cb8a572945996f65b146009ed77446f629dcc76b2256c") == true)
    }

    /// A LongRoPE model's factor lists must have rotary dimensions / 2 values.
    @Test func longRopeFactorsOfTheWrongLength() throws {
        let work = try ConvertFixtures.temporaryDirectory("llamacpp-rope")
        defer { try? FileManager.default.removeItem(at: work) }
        let dir = try Self.stories(in: work) {
            $0["rope_scaling"] = ["type": "longrope", "long_factor": [1.0, 1.0], "short_factor": [1.0, 1.0]]
        }
        let rope = Self.check(dir).findings.first { $0.code == "target_rope" }
        #expect(rope?.message.contains("must have 4 values each") == true)
    }
}

import Foundation
import PhiEngine
import PhiFormats
import PhiText
import TestSupport
import Testing

@testable import PhiKit

/// SmolLM2-135M-Instruct, the real chat model phikit reaches offline (llama architecture,
/// byte-level BPE with llama.cpp's `smollm` pre-tokenizer, Q4_1; goldens from
/// scripts/smollm2/make_goldens.py):
/// - always: the GGUF's vocabulary (Fixtures/smollm2/smollm2-vocab.gguf, metadata only)
///   becomes a tokenizer.json whose ids equal llama.cpp's for a corpus of digits, code,
///   emoji, scripts and the chat tokens;
/// - when scripts/smollm2/fetch_and_convert.sh fetched the 98 MB GGUF: it converts with every
///   Q4_1 block exact, and the model's logits and greedy tokens follow transformers' float32
///   forward pass over the same dequantized weights.
@Suite struct SmolLM2Tests {
    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/smollm2")
    static func golden(_ name: String) throws -> JSONValue {
        try JSONValue(parsing: [UInt8](Data(contentsOf: fixtures.appendingPathComponent(name))))
    }

    /// The fetched GGUF (scripts/smollm2/path.sh --gguf), nil when it was not fetched.
    static let realGGUF: String? = {
        let assets =
            ProcessInfo.processInfo.environment["PHIKIT_ASSETS"].map { URL(fileURLWithPath: $0) }
            ?? TestPaths.repository.appendingPathComponent(".build/assets")
        let path = assets.appendingPathComponent("smollm2/SmolLM2-135M-Instruct.Q4_1.gguf").path
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }()

    /// The golden's texts and llama.cpp's ids for them.
    static func cases() throws -> [(text: String, ids: [Int])] {
        try #require(golden("tokenizer.json")["cases"]?.arrayValue).map {
            (try #require($0["text"]?.stringValue), try #require($0["ids"]?.arrayValue).compactMap(\.intValue))
        }
    }

    static func expectLlamaCppIDs(_ tokenizer: Tokenizer) throws {
        let cases = try cases()
        #expect(cases.count >= 10)
        for (text, ids) in cases {
            #expect(try tokenizer.encode(text, addSpecialTokens: true) == ids, "\(text.debugDescription)")
        }
    }

    @Test func vocabularyOnlyGGUFTokenizesAsLlamaCpp() throws {
        let file = try GGUFFile(path: Self.fixtures.appendingPathComponent("smollm2-vocab.gguf").path)
        #expect(file.tensors.isEmpty && file.value("tokenizer.ggml.pre")?.stringValue == "smollm")
        let converted = try GGUFTokenizer(file, contextLength: 8192)
        let bytes = Array(converted.tokenizerJSON.pythonJSONDump(indent: 2).utf8)
        try Self.expectLlamaCppIDs(Tokenizer(tokenizerJSON: bytes, source: "tokenizer.json"))
        // ChatML ends a turn at <|im_end|> (2), the file's eos; <|endoftext|> (0) stops too.
        #expect(converted.eosIDs == [2, 0] && converted.bosID == 1)
    }

    @Test(.enabled(if: realGGUF != nil, "scripts/smollm2/fetch_and_convert.sh not run"))
    func realModelFollowsTransformers() throws {
        let out = try ConvertFixtures.temporaryDirectory("smollm2").appendingPathComponent("model")
        defer { try? FileManager.default.removeItem(at: out.deletingLastPathComponent()) }
        var options = ConvertOptions(source: try #require(Self.realGGUF), output: out.path)
        options.exact = true
        let summary = try convertGGUF(options)
        #expect(summary.modelType == "llama" && summary.inexact.isEmpty)
        #expect(summary.exactTypes == ["F32": 61, "Q4_1": 210, "Q8_0": 1])
        try Self.expectLlamaCppIDs(Tokenizer.load(directory: out.path))

        let golden = try Self.golden("model.json")
        let prompt = try #require(golden["prompt"]?.arrayValue).compactMap(\.intValue)
        let session = try InferenceSession(model: try ModelArchitectures.load(directory: out.path))
        var logits = try session.prefill(prompt)
        // Same weights to the bit (Q4_1 and Q8_0 blocks are MLX affine exactly); phikit rounds
        // activations to 16 bits per group in its kernels: the bound the quantized tiny models
        // meet against mlx (TinyModelTests.quantizedTolerance), relative to the largest logit.
        let scale = try #require(golden["max_abs_logit"]?.doubleValue)
        var worst = 0.0
        for entry in try #require(golden["top_logits"]?.arrayValue) {
            let pair = try #require(entry.arrayValue)
            let (id, want) = (try #require(pair.first?.intValue), try #require(pair.last?.doubleValue))
            worst = max(worst, abs(Double(logits[id]) - want) / scale)
        }
        print("SmolLM2 last-position logits: largest difference \(worst) of the largest logit")
        #expect(worst < 5e-4)
        let reference = try #require(golden["greedy"]?.arrayValue).compactMap(\.intValue)
        let gaps = try #require(golden["greedy_gaps"]?.arrayValue).compactMap(\.doubleValue)
        var tokens: [Int] = []
        for i in reference.indices {
            let best = logits.indices.max { logits[$0] < logits[$1] }!
            tokens.append(best)
            // A step whose top-2 gap is inside the tolerance may go either way; stop there.
            if best != reference[i] {
                #expect(gaps[i] < 5e-4 * scale, "token \(i): phikit \(best), transformers \(reference[i])")
                break
            }
            logits = try session.step(best)
        }
        print("SmolLM2 greedy: \(tokens.count) of \(reference.count) tokens as transformers")
        let llama = try #require(golden["llama_cpp_greedy"]?.arrayValue).compactMap(\.intValue)
        let agree = zip(reference, llama).prefix { $0 == $1 }.count
        #expect(Array(tokens.prefix(agree)) == Array(llama.prefix(agree)))
    }
}

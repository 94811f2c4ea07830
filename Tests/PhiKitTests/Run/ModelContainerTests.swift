import Foundation
import PhiEngine
import PhiFormats
import PhiText
import TestSupport
import Testing

@testable import PhiKit

/// The library API `run` is built on: loading by alias, prompt encoding (chat template or
/// plain text), stop tokens, generation with streamed text.
@Suite("model container")
struct ModelContainerTests {
    static let storyStart = "Once upon a time, there was a little girl named Lily."

    @Test("the bundled model by alias: registry prompt, plain-text ids, stop tokens, the story")
    func stories() throws {
        let container = try ModelContainer.load("stories-260k")
        #expect(container.chatTemplate == nil)
        #expect(container.location.entry?.defaultPrompt == "Once upon a time")
        // The README's ids for the prompt: <s> ▁Once ▁upon ▁a ▁time.
        #expect(try container.encode(.text("Once upon a time")) == [1, 403, 407, 261, 378])
        #expect(try container.encode(.text("")) == [1])
        // config.json 2, generation_config.json [2, 1], tokenizer </s> = 2.
        #expect(try container.stopTokens().ids == [1, 2])
        #expect(try container.stopTokens(extra: ["7", "</s>"]).ids == [1, 2, 7])

        var streamed = ""
        let outcome = try container.generate(.text(""), parameters: .greedy(maxTokens: 400)) {
            streamed += $0
            return .more
        }
        #expect(outcome.text == streamed)
        #expect(outcome.text.hasPrefix(Self.storyStart))
        #expect(outcome.stopReason == "eos" && outcome.generationTokens == 345)
        #expect(outcome.promptTokens == 1 && outcome.tokens.count == 345)
        #expect(outcome.text == container.tokenizer.decode(outcome.tokens))
    }

    @Test("a base model takes no conversation, no system message, no unknown stop token")
    func baseModelRefusals() throws {
        let container = try ModelContainer.load("stories-260k")
        #expect(throws: ChatPromptError.self) {
            try container.encode(.chat([ChatMessage(role: "user", content: "Hi")]))
        }
        #expect(throws: RunError.self) { try container.encode(.text("Hi", system: "Be brief.")) }
        #expect(throws: RunError.unknownStopToken("<|end|>")) {
            try container.stopTokens(extra: ["<|end|>"])
        }
        #expect(throws: RunError.unknownStopToken("512")) {
            try container.stopTokens(extra: ["512"])
        }
    }

    /// A tiny zero-weight model with Phi-3.5-mini's real tokenizer and chat template.
    static func phi35Chat() throws -> URL {
        let dir = try ConvertFixtures.temporaryDirectory("run-chat")
        let real = try TestPaths.sharedURL("microsoft--Phi-3.5-mini-instruct")
        for name in [
            "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
            "generation_config.json",
        ] {
            try FileManager.default.copyItem(
                at: real.appendingPathComponent(name), to: dir.appendingPathComponent(name))
        }
        let config = """
            {"model_type": "phi3", "hidden_size": 32, "intermediate_size": 64,
             "num_hidden_layers": 1, "num_attention_heads": 2, "vocab_size": 32064,
             "max_position_embeddings": 4096, "tie_word_embeddings": true,
             "eos_token_id": 32000, "bos_token_id": 1}
            """
        try Data(config.utf8).write(to: dir.appendingPathComponent("config.json"))
        let parsed = try ModelConfig(data: Array(config.utf8), source: "config.json")
        let specs = try ModelLayout(config: parsed).modules.map {
            TensorSpec(name: $0.weightName, dtype: .f32, shape: $0.shape)
        }
        let writer = try SafeTensorsWriter(
            path: dir.appendingPathComponent("model.safetensors").path, tensors: specs,
            metadata: ["format": "pt"])
        for spec in specs {
            try [UInt8](repeating: 0, count: spec.byteCount).withUnsafeBytes {
                try writer.write($0)
            }
        }
        try writer.finish()
        return dir
    }

    @Test("a chat model: prompts as apply_chat_template(tokenize=True), the union of stop tokens")
    func chatModel() throws {
        let dir = try Self.phi35Chat()
        defer { try? FileManager.default.removeItem(at: dir) }
        let container = try ModelContainer.load(dir.path)
        #expect(container.chatTemplate != nil)
        // Goldens of the chat prompt (transformers + tokenizers) for Phi-3.5-mini.
        for c in ChatPromptTests.golden.cases where c.model == "microsoft--Phi-3.5-mini-instruct" {
            let messages = c.conversation.map {
                ChatMessage(role: $0["role"] ?? "", content: $0["content"] ?? "")
            }
            #expect(try container.encode(.chat(messages)) == c.ids)
            if messages.count <= 2, let user = messages.last?.content {
                let system = messages.count == 2 ? messages[0].content : nil
                #expect(try container.encode(.text(user, system: system)) == c.ids)
            }
        }
        // Plain text is encoded with the tokenizer's own additions (none for Phi-3.5's
        // tokenizer.json; ids as `tokenizers` gives them, see PROVENANCE.md).
        let plain = try container.encode(.text("Hello world"), useChatTemplate: false)
        #expect(plain == [15043, 3186])
        // config 32000, generation_config [32007, 32001, 32000], tokenizer eos <|endoftext|>
        // = 32000, and the user's <|end|> (32007) and <|user|> (32010).
        #expect(
            try container.stopTokens(extra: ["<|end|>", "<|user|>"]).ids
                == [32000, 32001, 32007, 32010])
        let outcome = try container.generate(
            .text("Hi"), parameters: .greedy(maxTokens: 3), onText: { _ in .more })
        #expect(outcome.promptTokens == 4 && outcome.tokens.count == 3)
    }
}

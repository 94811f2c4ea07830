import Foundation
import PhiFormats
import TestSupport
import Testing

@testable import PhiText

/// tokenizer_config.json has one reader and one error policy: no file is no config, a file
/// that is there but unusable is an error naming it (the chat-template loader, `run`'s stop
/// tokens, `verify` and `convert` all read it here).
@Suite("TokenizerConfig")
struct TokenizerConfigTests {
    @Test("Phi-3.5-mini's real config: eos token, one template, added_tokens_decoder")
    func realConfig() throws {
        let config = try #require(
            try TokenizerConfig.load(
                directory: TestPaths.shared("microsoft--Phi-3.5-mini-instruct")))
        #expect(config.eosToken == "<|endoftext|>")
        #expect(config.hasAddedTokensDecoder)
        guard case .single(let template) = try config.chatTemplates() else {
            Issue.record("expected one chat template")
            return
        }
        #expect(template.contains("<|assistant|>"))
    }

    @Test("no file is no config; each shape of a broken file is an error naming it")
    func errorPolicy() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-tokenizer-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        #expect(try TokenizerConfig.load(directory: directory) == nil)

        let path = directory + "/tokenizer_config.json"
        func write(_ text: String) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        }

        try write(#"{"eos_token": {"content": "</s>", "lstrip": false}, "chat_template": null}"#)
        let objectToken = try #require(try TokenizerConfig.load(directory: directory))
        #expect(objectToken.eosToken == "</s>")
        #expect(try objectToken.chatTemplates() == nil)
        #expect(!objectToken.hasAddedTokensDecoder)

        try write(
            #"{"chat_template": [{"name": "default", "template": "a"}, {"name": "rag", "template": "b"}]}"#
        )
        #expect(
            try TokenizerConfig.load(directory: directory)?.chatTemplates()
                == .named([
                    .init(name: "default", template: "a"), .init(name: "rag", template: "b"),
                ]))

        try write(#"{"chat_template": 42}"#)
        #expect(
            throws: TokenizerConfigError.invalid(
                path: path, message: "chat_template must be a string or a list of {name, template}")
        ) { try TokenizerConfig.load(directory: directory)?.chatTemplates() }

        try write("[1, 2]")
        #expect(throws: TokenizerConfigError.invalid(path: path, message: "expected a JSON object"))
        {
            try TokenizerConfig.load(directory: directory)
        }

        try write(#"{"eos_token": "#)
        do {
            _ = try TokenizerConfig.load(directory: directory)
            Issue.record("read a truncated tokenizer_config.json")
        } catch {
            #expect(error.exitCode == .dataError)
            #expect(error.message.hasPrefix(path + ": not valid JSON"))
        }
    }
}

import Foundation
import PhiEngine
import PhiFormats
import TestSupport
import Testing

@testable import PhiKit

/// Where a setting comes from: what the caller said > registry > generation_config.json (read
/// as transformers reads it) > the front end's built-in defaults.
@Suite("generation settings and their defaults")
struct GenerationSettingsTests {
    /// stories-260k with `fields` added to its generation_config.json.
    static func container(_ fields: String) throws -> (ModelContainer, URL) {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-gencfg-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestPaths.storiesModel, to: dir)
        let config = #"{"bos_token_id": 1, "eos_token_id": [2, 1]"# + fields + "}"
        try Data(config.utf8).write(to: dir.appendingPathComponent("generation_config.json"))
        return (try ModelContainer.load(dir.path), dir)
    }

    @Test("built-in defaults per front end when nothing else says")
    func builtIn() throws {
        let (c, dir) = try Self.container("")
        defer { try? FileManager.default.removeItem(at: dir) }
        let none = GenerationSettings()
        #expect(c.parameters(none, for: .run) == GenerationParameters(maxTokens: 256, temperature: 0))
        #expect(c.parameters(none, for: .chat) == GenerationParameters(maxTokens: 1024, temperature: 0.6))
        #expect(c.parameters(none, for: .serve).temperature == 1)
    }

    @Test("generation_config.json as transformers: sampling only with do_sample")
    func generationConfig() throws {
        let (sampling, a) = try Self.container(#", "do_sample": true, "temperature": 0.7, "top_p": 0.9"#)
        defer { try? FileManager.default.removeItem(at: a) }
        let p = sampling.parameters(GenerationSettings(), for: .run)
        #expect(p.temperature == 0.7 && p.topP == 0.9 && p.topK == 50)  // transformers' top_k
        var said = GenerationSettings()
        said[.temperature] = .number(0)
        said[.topK] = .integer(5)
        let q = sampling.parameters(said, for: .chat)
        #expect(q.temperature == 0 && q.topK == 5 && q.topP == 0.9)  // the caller wins
        // temperature without do_sample: transformers decodes greedily.
        let (greedy, b) = try Self.container(#", "temperature": 0.7"#)
        defer { try? FileManager.default.removeItem(at: b) }
        #expect(greedy.parameters(GenerationSettings(), for: .serve).temperature == 0)
    }

    @Test("the context default is the model's positions, at most 4096")
    func contextDefault() throws {
        let (c, dir) = try Self.container("")
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(c.defaultContext() == min(c.model.maxPositions, 4096))
        #expect(c.defaultContext(100) == 100)
    }
}

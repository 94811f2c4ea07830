import Foundation
import PhiFormats
import Testing

@testable import PhiEngine

/// The generation loop on the bundled TinyStories model: its stop tokens, limits and
/// callback, against the transformers golden and the model's README.
@Suite("generate")
struct GenerateTests {
    let model: Phi3Model
    let story: [Int]

    init() throws {
        model = try Phi3Model.load(directory: EngineGoldens.storiesModel)
        story = try EngineGoldens.stories().story.greedy
    }

    func run(
        _ parameters: GenerationParameters, prompt: [Int] = [1], maxContext: Int? = nil,
        onToken: (Int) -> GenerationDisposition = { _ in .more }
    ) throws -> GenerationOutcome {
        let session = try InferenceSession(model: model, maxContext: maxContext)
        return try generate(
            session: session, prompt: prompt, parameters: parameters,
            stopTokens: StopTokens(model: model), onToken: onToken)
    }

    @Test("greedy generation streams the story and stops at <s>, the model's end of story")
    func storyUntilEnd() throws {
        var streamed: [Int] = []
        let outcome = try run(.greedy(maxTokens: 500)) {
            streamed.append($0)
            return .more
        }
        #expect(Array(outcome.tokens.prefix(256)) == story)
        #expect(outcome.stopReason == .endOfSequence)
        // The README: greedy from <s> emits id 1 at generated position 345.
        #expect(outcome.tokens.count == 345)
        #expect(streamed == outcome.tokens)
        #expect(outcome.promptTokens == 1 && outcome.decodeSteps == 345)
        #expect(outcome.promptSeconds > 0 && outcome.decodeSeconds > 0)
        #expect(outcome.timeToFirstToken >= outcome.promptSeconds)
    }

    @Test("ignoreEOS goes through the end token; maxTokens stops exactly")
    func limits() throws {
        var parameters = GenerationParameters.greedy(maxTokens: 350)
        parameters.ignoreEOS = true
        let outcome = try run(parameters)
        #expect(outcome.tokens.count == 350 && outcome.stopReason == .maxTokens)
        #expect(outcome.tokens[345] == 1)
        #expect(outcome.decodeSteps == 349)
        let short = try run(.greedy(maxTokens: 10))
        #expect(short.tokens == Array(story.prefix(10)) && short.stopReason == .maxTokens)
    }

    @Test("a full context stops generation after the last position's token")
    func contextFull() throws {
        let outcome = try run(
            .greedy(maxTokens: 100), prompt: [1, 403, 407, 261, 378], maxContext: 20)
        #expect(outcome.stopReason == .contextFull)
        #expect(outcome.tokens.count == 16)  // positions 5…19 fed, plus the last token chosen
        #expect(throws: SessionError.contextFull(needed: 21, limit: 20)) {
            try run(.greedy(maxTokens: 1), prompt: Array(repeating: 1, count: 21), maxContext: 20)
        }
    }

    @Test("the callback can stop generation; the token it saw is kept")
    func cancel() throws {
        var seen = 0
        let outcome = try run(.greedy(maxTokens: 100)) { _ in
            seen += 1
            return seen == 3 ? .stop : .more
        }
        #expect(outcome.tokens == Array(story.prefix(3)) && outcome.stopReason == .cancelled)
    }

    @Test("seeded sampling repeats; another seed writes another story")
    func seededSampling() throws {
        func sample(_ seed: UInt64) throws -> [Int] {
            try run(GenerationParameters(maxTokens: 40, temperature: 1, topP: 0.95, seed: seed))
                .tokens
        }
        let first = try sample(11)
        #expect(try sample(11) == first)
        #expect(try sample(12) != first)
        #expect(first != Array(story.prefix(first.count)))
    }

    @Test("stop tokens are the union of every source")
    func stopTokens() throws {
        let config = try ModelConfig(
            data: Array(
                #"{"model_type":"phi3","hidden_size":8,"intermediate_size":8,"num_hidden_layers":1,"num_attention_heads":2,"vocab_size":32064,"eos_token_id":32000}"#
                    .utf8), source: "config.json")
        let generation = GenerationConfig(eosTokenIds: [32007, 32001, 32000])
        let stops = StopTokens(
            config: config, generationConfig: generation, tokenizerEOS: 2, extra: [32010])
        #expect(stops.ids == [32000, 32007, 32001, 2, 32010])
        #expect(StopTokens(model: model).ids == [2, 1])
    }
}

import Testing

@testable import PhiEngine

/// Exact speculative decoding: with a `PromptLookupDrafter`, greedy generation gives the same
/// tokens as plain decoding, token for token, and a seeded sampled run repeats. The engine's
/// alone == block property (`InferenceSession.verify`'s rows are bit for bit what steps
/// give) is what makes it exact; these runs check the whole path — drafting, one verify pass
/// per draft, acceptance, the rewind of rejected positions — on both Phi shapes (4-bit; the
/// tiny Phi-3.5 crosses its LongRoPE switch at 32 positions mid-answer), the phi shape and
/// the trained stories-260k, over prompts that invite drafts (repeated phrases) and ones
/// that do not.
@Suite("speculative decoding is exact")
struct SpeculativeIdentityTests {
    static func models() throws -> [(String, any CausalLanguageModel)] {
        let tiny = try SessionReuseTests.models().filter { $0.0.hasSuffix("4-bit") }
            .map { ($0.0, $0.2) }
        return tiny + [("stories-260k", try Phi3Model.load(directory: EngineGoldens.storiesModel))]
    }

    /// Prompts of a few shapes: a phrase said twice (a quote to copy), a counting pattern,
    /// a short start, and pseudo-random tokens.
    static func prompts(vocabulary: Int) -> [[Int]] {
        var random = RandomSource(seed: 31)
        func token() -> Int { 3 + Int(random.next() % UInt64(min(vocabulary, 400) - 3)) }
        var prompts: [[Int]] = []
        for length in [6, 10, 14] {
            let phrase = (0..<length).map { _ in token() }
            prompts.append([1] + phrase + [token()] + phrase + [token()] + phrase.prefix(3))
        }
        prompts.append([1] + (0..<24).map { 3 + $0 % 7 })
        prompts.append([1, token()])
        for _ in 0..<3 { prompts.append([1] + (0..<12).map { _ in token() }) }
        return prompts
    }

    static func run(
        _ model: any CausalLanguageModel, _ prompt: [Int], _ parameters: GenerationParameters,
        drafter: (any TokenDrafter)?
    ) throws -> GenerationOutcome {
        let session = try InferenceSession(model: model, maxContext: 128)
        let hooks = GenerationHooks(drafter: drafter, draftLength: 6)
        return try generate(
            session: session, prompt: prompt, parameters: parameters,
            stopTokens: StopTokens([2]), hooks: hooks
        ) { _ in .more }
    }

    @Test("greedy with prompt-lookup drafts equals greedy without, token for token")
    func greedyIdentity() throws {
        let parameters = GenerationParameters.greedy(maxTokens: 48)
        for (label, model) in try Self.models() {
            var accepted = 0
            for (i, prompt) in Self.prompts(vocabulary: model.vocabularySize).enumerated() {
                let plain = try Self.run(model, prompt, parameters, drafter: nil)
                // a still clock: the cost model keeps its prior instead of timings, which on
                // a loaded machine can price every draft out (CI once kept too few to count)
                let drafter = PromptLookupDrafter(maxDraft: 6, clock: { 0 })
                let fast = try Self.run(model, prompt, parameters, drafter: drafter)
                #expect(fast.tokens == plain.tokens, "\(label) prompt \(i)")
                #expect(fast.stopReason == plain.stopReason, "\(label) prompt \(i)")
                #expect(fast.acceptedDraftTokens == drafter.accepted)
                accepted += drafter.accepted
            }
            // the trained model repeats its phrases: prompt lookup is exercised there (the
            // random tiny models seldom repeat; scriptedDrafts covers them)
            if label == "stories-260k" { #expect(accepted > 20, "\(accepted) kept") }
        }
    }

    /// Proposes the plain run's own continuation with every `corruptEvery`-th drafted token
    /// changed, in drafts of 1…6 tokens: long agreeing prefixes, rejections at every place
    /// in a block, and drafts the context has no match for. The random tiny models seldom
    /// repeat themselves, so prompt lookup alone would leave their verify path untried.
    final class ScriptedDrafter: TokenDrafter {
        let answer: [Int]
        let promptLength: Int
        let vocabulary: Int
        var calls = 0
        init(answer: [Int], promptLength: Int, vocabulary: Int) {
            (self.answer, self.promptLength, self.vocabulary) = (answer, promptLength, vocabulary)
        }
        func draft(after tokens: [Int], limit: Int) -> [Int] {
            calls += 1
            let next = tokens.count - promptLength  // answer tokens already chosen
            let length = min(limit, 1 + calls % 6, max(0, answer.count - next))
            return (0..<length).map { j in
                let token = answer[next + j]
                return (calls + j) % 5 == 4 ? (token + 1) % vocabulary : token
            }
        }
        func observe(drafted: Int, accepted: Int) {}
    }

    @Test("greedy with drafts right and wrong anywhere equals greedy without")
    func scriptedDrafts() throws {
        let parameters = GenerationParameters.greedy(maxTokens: 48)
        for (label, model) in try Self.models() {
            var (drafted, accepted) = (0, 0)
            for (i, prompt) in Self.prompts(vocabulary: model.vocabularySize).enumerated() {
                let plain = try Self.run(model, prompt, parameters, drafter: nil)
                let drafter = ScriptedDrafter(
                    answer: plain.tokens + [2], promptLength: prompt.count,
                    vocabulary: model.vocabularySize)
                let fast = try Self.run(model, prompt, parameters, drafter: drafter)
                #expect(fast.tokens == plain.tokens, "\(label) prompt \(i)")
                #expect(fast.stopReason == plain.stopReason, "\(label) prompt \(i)")
                drafted += fast.draftedTokens
                accepted += fast.acceptedDraftTokens
            }
            #expect(accepted > 100 && drafted - accepted > 20, "\(label): \(accepted) of \(drafted)")
        }
    }

    @Test("a seeded sampled run gives the same tokens with drafts as without")
    func seededSampling() throws {
        let model = try Phi3Model.load(directory: EngineGoldens.storiesModel)
        var parameters = GenerationParameters(maxTokens: 64, temperature: 0.8, seed: 9)
        parameters.topP = 0.95
        for prompt in Self.prompts(vocabulary: model.vocabularySize).prefix(4) {
            let plain = try Self.run(model, prompt, parameters, drafter: nil)
            let drafter = PromptLookupDrafter()
            let fast = try Self.run(model, prompt, parameters, drafter: drafter)
            #expect(fast.tokens == plain.tokens)
            let plain2 = try Self.run(model, prompt, parameters, drafter: nil)
            let scripted = ScriptedDrafter(
                answer: plain2.tokens + [2], promptLength: prompt.count,
                vocabulary: model.vocabularySize)
            let checked = try Self.run(model, prompt, parameters, drafter: scripted)
            #expect(checked.tokens == plain.tokens && checked.acceptedDraftTokens > 0)
        }
    }
}

import Foundation
import PhiEngine
import PhiKit
import PhiText
import TestSupport
import Testing

@testable import PhiServer

/// The generation hooks (issue 28) through every driver: a toy constraint and a toy drafter
/// give the same answer in `run` (ModelContainer.generate), `chat` (ChatSession) and a
/// batched server slot.
@Suite("generation hooks in run, chat and serve")
struct GenerationHooksTests {
    /// Allows only even ids in 260..<400; after every 4th sampled token forces [300, 301];
    /// complete after 20 tokens. Records what it was advanced with.
    final class EvenTokensWithRuns: TokenConstraint {
        private(set) var advanced: [Int] = []
        private var sampled = 0
        private var forced: [Int] = []

        func allow(_ mask: inout TokenMask) {
            if let next = forced.first {
                mask.allow(next)
            } else {
                mask.allow(contentsOf: stride(from: 260, to: 400, by: 2))
            }
        }
        func forcedTokens(limit: Int) -> [Int] { Array(forced.prefix(limit)) }
        func advance(_ token: Int) throws {
            advanced.append(token)
            if let next = forced.first {
                precondition(token == next, "a token the constraint did not allow")
                forced.removeFirst()
                return
            }
            sampled += 1
            if sampled % 4 == 0 { forced = [300, 301] }
        }
        var canEnd: Bool { false }
        var isComplete: Bool { advanced.count >= 20 }
    }

    /// Proposes the known answer from where the sequence is, every third proposal wrong.
    final class ReferenceDrafter: TokenDrafter {
        let reference: [Int]
        let promptCount: Int
        private(set) var proposals = 0
        private(set) var drafted = 0
        private(set) var accepted = 0

        init(reference: [Int], promptCount: Int) {
            self.reference = reference
            self.promptCount = promptCount
        }
        func draft(after tokens: [Int], limit: Int) -> [Int] {
            let at = tokens.count - promptCount
            guard at < reference.count else { return [] }
            proposals += 1
            var guess = Array(reference[at..<min(reference.count, at + limit)])
            if proposals % 3 == 0, !guess.isEmpty { guess[guess.count / 2] += 2 }
            return guess
        }
        func observe(drafted: Int, accepted: Int) {
            self.drafted += drafted
            self.accepted += accepted
        }
    }

    /// stories-260k with a chat template (messages' contents after <s>), so chat works.
    static func chatModel() throws -> URL {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-hooks-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: TestPaths.storiesModel, to: dir)
        try Data("{{ bos_token }}{% for m in messages %}{{ m['content'] }}{% endfor %}".utf8)
            .write(to: dir.appendingPathComponent("chat_template.jinja"))
        return dir
    }

    static let message = "Once upon a time"

    @Test("a constraint and a drafter: the same tokens in run, chat and a batched slot")
    func sameAnswerEverywhere() throws {
        let dir = try Self.chatModel()
        defer { try? FileManager.default.removeItem(at: dir) }
        let container = try ModelContainer.load(dir.path)
        let parameters = GenerationParameters.greedy(maxTokens: 40)
        let prompt = RunPrompt.chat([ChatMessage(role: "user", content: Self.message)])
        let ids = try container.encode(prompt)

        // run, constrained, no drafter: the reference.
        let constraint = EvenTokensWithRuns()
        let run = try container.generate(
            prompt, parameters: parameters, options: GenerateOptions(constraint: constraint),
            onText: { _ in .more })
        #expect(run.stopReason == "constraint_complete")
        #expect(run.tokens.count == 20 && constraint.advanced == run.tokens)
        var sampledCount = 0
        var i = 0
        while i < run.tokens.count {
            #expect(run.tokens[i] % 2 == 0 && (260..<400).contains(run.tokens[i]))
            sampledCount += 1
            i += 1
            if sampledCount % 4 == 0 && i < run.tokens.count {
                let end = min(i + 2, run.tokens.count)
                let expected: [Int] = Array([300, 301].prefix(end - i))
                #expect(Array(run.tokens[i..<end]) == expected)
                i = end
            }
        }
        let unconstrained = try container.generate(
            prompt, parameters: parameters, onText: { _ in .more })
        #expect(unconstrained.tokens != run.tokens)

        // run with a drafter: the same tokens, some drafts kept and some not.
        let drafter = ReferenceDrafter(reference: run.tokens, promptCount: ids.count)
        let drafted = try container.generate(
            prompt, parameters: parameters,
            options: GenerateOptions(constraint: EvenTokensWithRuns(), drafter: drafter),
            onText: { _ in .more })
        #expect(drafted.tokens == run.tokens && drafted.text == run.text)
        #expect(drafter.accepted > 0 && drafter.accepted < drafter.drafted)

        // chat: the same answer through ChatSession, with and without the drafter.
        var settings = GenerationSettings()
        settings[.temperature] = .number(0)
        settings[.maxTokens] = .integer(40)
        var options = ChatOptions()
        options.settings = settings
        let chat = try ChatSession(container: container, options: options)
        let reply = try chat.send(Self.message, constraint: EvenTokensWithRuns()) { _ in }
        #expect(reply.generation.tokens == run.tokens && reply.text == run.text)
        #expect(reply.generation.stopReason == .constraintComplete)
        chat.reset()
        let chatDrafter = ReferenceDrafter(reference: run.tokens, promptCount: ids.count)
        let drafted2 = try chat.send(
            Self.message, constraint: EvenTokensWithRuns(), drafter: chatDrafter
        ) { _ in }
        #expect(drafted2.generation.tokens == run.tokens)
        #expect(drafted2.generation.acceptedDraftTokens == chatDrafter.accepted)
        #expect(chatDrafter.accepted > 0)

        // serve: three slots at once — constrained with a drafter (verifies alone), constrained
        // (in the batch but for its forced runs), plain (in the batch).
        let scheduler = Scheduler(
            container: container,
            configuration: .init(parallel: 3, queueCapacity: 4, contextSize: 256, cacheBytes: 1 << 20))
        scheduler.start()
        defer { scheduler.shutdown() }
        let reference = run.tokens
        let promptCount = ids.count
        var hooked = GenerationRequest(
            prompt: ids, parameters: parameters, stopTokens: try container.stopTokens(),
            stopStrings: [], logprobs: nil)
        hooked.makeConstraint = { EvenTokensWithRuns() }
        hooked.makeDrafter = { ReferenceDrafter(reference: reference, promptCount: promptCount) }
        var constrained = hooked
        constrained.makeDrafter = nil
        var plain = constrained
        plain.makeConstraint = nil
        let jobs = [GenerationJob(hooked), GenerationJob(constrained), GenerationJob(plain)]
        for job in jobs { try scheduler.submit(job) }
        let answers = jobs.map(Self.answer)
        for answer in answers.prefix(2) {
            #expect(answer.text == run.text && answer.summary?.finishReason == .stop)
            #expect(answer.summary?.completionTokens == 20)
        }
        #expect(answers[2].text == unconstrained.text)
    }

    static func answer(_ job: GenerationJob) -> (text: String, summary: GenerationSummary?) {
        var text = ""
        while true {
            for event in job.take() {
                switch event {
                case .text(let piece, _): text += piece
                case .finished(let summary): return (text, summary)
                case .failed: return (text, nil)
                }
            }
        }
    }
}

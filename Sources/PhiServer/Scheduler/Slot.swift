import PhiEngine
import PhiKit
import PhiText

/// One request being generated: its session and its `Generator` (the same one `phikit run`
/// drives, so a greedy answer equals `run`'s). The slot only feeds: the prompt in chunks
/// between other slots' steps, then each step's block — its pending tokens and a draft, in
/// the scheduler's batched step — and turns the generator's steps into the job's events.
final class Slot {
    let job: GenerationJob
    /// Its place in the order of admission (prompts are computed first come, first served).
    let admission: Int
    let entry: CachedSession
    var session: InferenceSession { entry.session }
    /// Prompt tokens the session's cache supplied (known once the first chunk is in).
    private(set) var cachedTokens = 0
    /// What the prompt cache expected to reuse when it picked this session.
    private let expectedReuse: Int
    private let tokenizer: Tokenizer
    /// Made once the whole prompt is in (it starts from the session's tokens).
    private var generator: Generator?
    /// How many prompt tokens are in the session (prefill goes in chunks between other
    /// slots' steps); nil before the first chunk.
    private var fed: Int?
    /// The tokens chosen last, to feed at the next step (one, unless a constraint forced a
    /// run), and drafted tokens to verify with them.
    private(set) var pending: [Int] = []
    private(set) var draft: [Int] = []
    private var generated = 0
    /// UTF-8 bytes of the answer sent so far.
    private var sentBytes = 0
    private var heldLogprobs: [TokenLogprob] = []
    /// The server's speculative decoding, for a request without a drafter of its own.
    private let speculation: Speculation
    private var draftLength = 0
    private var draftedTokens = 0
    private var acceptedDraftTokens = 0

    init(
        job: GenerationJob, admission: Int, entry: CachedSession, expectedReuse: Int,
        tokenizer: Tokenizer, speculation: Speculation = .off
    ) {
        self.job = job
        self.admission = admission
        self.speculation = speculation
        self.entry = entry
        self.expectedReuse = expectedReuse
        self.tokenizer = tokenizer
    }

    var isPrefilling: Bool { fed != job.request.prompt.count }

    /// What the slot feeds at its next step: the tokens chosen last and the draft to verify
    /// after them.
    var block: [Int] { pending + draft }

    /// The next chunk of the prompt to feed, at most `limit` tokens (the first call keeps
    /// the prefix the session's cache holds, `keepPrefix`); `fedPrompt` notes it fed. A
    /// token's result does not depend on how tokens are grouped into calls, nor on other
    /// sessions' tokens in the same batched step, so the chunks compute what one call would.
    func nextPromptChunk(limit: Int) throws -> [Int] {
        let prompt = job.request.prompt
        let limit = min(limit, session.maxVerifyTokens)
        let start: Int
        if let fed {
            start = fed
        } else {
            let end = min(prompt.count, expectedReuse + limit)
            cachedTokens = try session.keepPrefix(of: Array(prompt[..<end]))
            start = session.position
            fed = start
        }
        return Array(prompt[start..<min(prompt.count, start + limit)])
    }

    /// `count` more prompt tokens are in the session.
    func fedPrompt(_ count: Int) {
        fed = (fed ?? 0) + count
    }

    /// Picks the next tokens from the logits after the last ones fed and reports their text;
    /// returns why the answer ended, or nil to go on.
    func accept(_ logits: UnsafeBufferPointer<Float>) throws -> FinishReason? {
        report(try started().step(logits))
    }

    /// Drafts what to verify with the pending tokens at the next step (nothing without a
    /// drafter, or when the drafter judges it not worth its rows in `batch`).
    func planDraft(in batch: BatchDraftContext) throws {
        draft =
            try started().draft(
                limit: min(draftLength, session.maxVerifyTokens - pending.count), in: batch)
    }

    /// Takes the logits after each token of `block` (fed in the batched step): the next
    /// step's tokens from the last row, or, with a draft, the agreeing prefix of the draft
    /// and the model's own token after it; a rejected draft's positions are forgotten.
    func accept(rows: LogitRows) throws -> FinishReason? {
        let generator = try started()
        let drafted = draft
        guard !drafted.isEmpty else { return report(try generator.step(rows[rows.count - 1])) }
        // the rows the draft check reads: the last pending token's and each drafted token's
        let first = rows.count - drafted.count - 1
        let step = try generator.verify(
            draft: drafted, logits: (first..<rows.count).map { rows[$0] })
        session.rewind(to: session.position - drafted.count + step.acceptedDraft)
        draftedTokens += drafted.count
        acceptedDraftTokens += step.acceptedDraft
        return report(step)
    }

    /// Sends what is still held back (unless a stop string ended the answer) and the summary.
    func finish(_ reason: FinishReason) {
        if reason != .cancelled, let generator {
            let rest = generator.finishText()
            send(rest, final: generator.stoppedByString ? .stopString : .end)
        }
        job.post(
            .finished(
                GenerationSummary(
                    promptTokens: job.request.prompt.count, cachedTokens: cachedTokens,
                    completionTokens: generated, finishReason: reason,
                    stopString: generator?.stopString, draftedTokens: draftedTokens,
                    acceptedDraftTokens: acceptedDraftTokens)))
    }

    /// The generator, made on first use: the prompt is in the session by then.
    private func started() throws -> Generator {
        if let generator { return generator }
        let request = job.request
        let drafting =
            request.makeDrafter.map { ($0(), request.draftLength) }
            ?? speculation.hooks(drafter: nil)
        draftLength = drafting.1
        let made = Generator(
            parameters: request.parameters, vocabularySize: session.model.vocabularySize,
            stopTokens: request.stopTokens, context: session.tokens,
            maxContext: session.maxContext,
            text: ReplyText(
                tokenizer: tokenizer, stopStrings: request.stopStrings,
                continuing: request.continuesPrompt ? Array(request.prompt.suffix(1)) : []),
            constraint: try request.makeConstraint?(), drafter: drafting.0,
            logprobs: request.logprobs)
        generator = made
        return made
    }

    /// Posts each token's text (and log-probabilities) as `GenerationEvent`s; sets what to
    /// feed next.
    private func report(_ step: GeneratorStep) -> FinishReason? {
        pending = []
        draft = []
        for (i, token) in step.tokens.enumerated() {
            generated += 1
            if let logprobs = token.logprobs {
                heldLogprobs.append(
                    LogprobTable.entry(
                        logprobs, chosen: token.id, tokenizer: tokenizer,
                        textOffset: token.textOffset))
            }
            let stopped = step.finish == .stopString && i == step.tokens.count - 1
            send(token.text, final: stopped ? .stopString : nil)
        }
        switch step.finish {
        case .endOfSequence, .stopString, .constraintComplete: return .stop
        case .maxTokens, .contextFull: return .length
        case .cancelled: return .cancelled
        case nil: break
        }
        pending = Array(step.ids.dropFirst(step.acceptedDraft))
        return nil
    }

    private enum Ending { case stopString, end }

    /// Posts `text` with the log-probabilities of the tokens whose text it starts; at the
    /// end, of every token left (before a stop string: those that start before it).
    private func send(_ text: String, final: Ending? = nil) {
        sentBytes += text.utf8.count
        let released = heldLogprobs.filter { $0.textOffset < sentBytes || final == .end }
        heldLogprobs = final == nil ? Array(heldLogprobs.dropFirst(released.count)) : []
        guard !text.isEmpty || !released.isEmpty else { return }
        job.post(.text(text, released))
    }
}

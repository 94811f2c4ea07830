import PhiEngine
import PhiText

/// One request being generated: its session, sampler, text decoder and stop-string matcher.
/// Mirrors `PhiEngine.generate` step for step (same sampler calls on the same logits, same
/// stopping order), so a greedy answer equals `phikit run` of the same prompt.
final class Slot {
    let job: GenerationJob
    let entry: CachedSession
    var session: InferenceSession { entry.session }
    /// Prompt tokens the session's cache supplied (known once the first chunk is in).
    private(set) var cachedTokens = 0
    /// What the prompt cache expected to reuse when it picked this session.
    private let expectedReuse: Int
    private let sampler: Sampler
    private let tokenizer: Tokenizer
    private var decoder: StreamingDecoder
    private var matcher: StopStringMatcher
    /// How many prompt tokens are in the session (prefill goes in chunks between other
    /// slots' steps); nil before the first chunk.
    private var fed: Int?
    /// The token chosen last, fed by the next step.
    private(set) var nextToken: Int?
    private var generated = 0
    /// UTF-8 bytes decoded so far, and how many of them were sent.
    private var decodedBytes = 0
    private var sentBytes = 0
    private var heldLogprobs: [TokenLogprob] = []

    init(job: GenerationJob, entry: CachedSession, expectedReuse: Int, tokenizer: Tokenizer) {
        self.job = job
        self.entry = entry
        self.expectedReuse = expectedReuse
        self.tokenizer = tokenizer
        let request = job.request
        sampler = Sampler(
            parameters: request.parameters, vocabularySize: entry.session.model.vocabularySize)
        decoder = StreamingDecoder(tokenizer: tokenizer)
        matcher = StopStringMatcher(request.stopStrings)
    }

    var isPrefilling: Bool { fed != job.request.prompt.count }

    /// Feeds the next chunk of the prompt (the first through `prepare`, which keeps the
    /// cached prefix); returns the logits once the whole prompt is in. A token's result does
    /// not depend on how tokens are grouped into calls, so chunks compute what one call would.
    func prefillChunk(_ size: Int) throws -> UnsafeBufferPointer<Float>? {
        let prompt = job.request.prompt
        let start = fed ?? expectedReuse
        let end = min(prompt.count, start + size)
        let logits: UnsafeBufferPointer<Float>
        if fed == nil {
            cachedTokens = try session.prepare(Array(prompt[..<end]))
            logits = session.logits
        } else {
            logits = try session.prefill(Array(prompt[start..<end]))
        }
        fed = end
        return end == prompt.count ? logits : nil
    }

    /// Picks the next token from `logits` and reports its text; returns why the answer
    /// ended, or nil to go on.
    func accept(_ logits: UnsafeBufferPointer<Float>) -> FinishReason? {
        let request = job.request
        let token = sampler.sample(logits, history: session.tokens)
        nextToken = nil
        if !request.parameters.ignoreEOS && request.stopTokens.contains(token) { return .stop }
        generated += 1
        let piece = decoder.append(token)
        if let top = request.logprobs {
            heldLogprobs.append(
                LogprobTable.entry(
                    logits: logits, chosen: token, top: top, tokenizer: tokenizer,
                    textOffset: decodedBytes))
        }
        decodedBytes += piece.utf8.count
        let (text, stopped) = matcher.append(piece)
        send(text, final: stopped ? .stopString : nil)
        if stopped { return .stop }
        if generated >= request.parameters.maxTokens { return .length }
        if session.position >= session.maxContext { return .length }
        nextToken = token
        return nil
    }

    /// Sends what is still held back (unless a stop string ended the answer) and the summary.
    func finish(_ reason: FinishReason) {
        if reason != .cancelled {
            let (text, stopped) = matcher.append(decoder.flush())
            send(stopped ? text : text + matcher.flush(), final: stopped ? .stopString : .end)
        }
        job.post(
            .finished(
                GenerationSummary(
                    promptTokens: job.request.prompt.count, cachedTokens: cachedTokens,
                    completionTokens: generated, finishReason: reason,
                    stopString: matcher.matched)))
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

import Foundation
import PhiEngine

/// What one request asks the scheduler to generate: the prompt's token ids and how to pick
/// and stop. Built by the OpenAI layer; the scheduler only sees tokens and text.
struct GenerationRequest: Sendable {
    var prompt: [Int]
    var parameters: GenerationParameters
    var stopTokens: StopTokens
    /// Matched on the generated text, across token boundaries; never part of the answer.
    var stopStrings: [String]
    /// How many alternatives to report per token (0...10); nil: no log-probabilities.
    var logprobs: Int?
    /// The run-time adapter (index into the container's `adapters`) the answer is generated
    /// with; nil: the base model.
    var adapter: Int? = nil
    /// The request's own `TokenConstraint` and `TokenDrafter`, made on the scheduler's thread
    /// when the request gets its slot (each is one sequence's and keeps state).
    var makeConstraint: (@Sendable () throws -> any TokenConstraint)? = nil
    var makeDrafter: (@Sendable () -> any TokenDrafter)? = nil
    /// Drafted tokens verified per step at most.
    var draftLength = 4
    /// The answer's text continues the prompt's (`echo`): decoded after the prompt's last
    /// token, so a leading space is not stripped as at the start of a text.
    var continuesPrompt = false
}

/// The log-probability of one generated token and of the likeliest alternatives, from the
/// log-softmax of the logits the sampler saw.
struct TokenLogprob: Sendable, Equatable {
    struct Alternative: Sendable, Equatable {
        var token: String
        var logprob: Double
    }
    var token: String
    var logprob: Double
    var top: [Alternative]
    /// Where the token's text starts in the answer (UTF-8 bytes); the legacy completions
    /// API reports it as `text_offset`.
    var textOffset: Int
}

/// Why an answer ended, in OpenAI's words before tool calls are considered.
enum FinishReason: String, Sendable {
    /// A stop token or a stop string.
    case stop
    /// `max_tokens`, or the context is full.
    case length
    /// The client went away or the server is stopping: nobody reads the answer.
    case cancelled
}

struct GenerationSummary: Sendable, Equatable {
    var promptTokens: Int
    var cachedTokens: Int
    var completionTokens: Int
    var finishReason: FinishReason
    /// The stop string that ended the answer, when one did.
    var stopString: String? = nil
    /// Speculative decoding: tokens drafted, and how many of them were kept.
    var draftedTokens = 0
    var acceptedDraftTokens = 0
}

/// What the scheduler reports to the connection that waits for the answer.
enum GenerationEvent: Sendable {
    /// Text that is final (stop strings already cut), with the log-probabilities of the
    /// tokens it completes when they were asked for.
    case text(String, [TokenLogprob])
    case finished(GenerationSummary)
    case failed(any Error & Sendable)
}

/// When a job got its slot, produced its first text and finished (nil: not yet).
struct JobTiming: Sendable {
    var admitted: ContinuousClock.Instant?
    var firstText: ContinuousClock.Instant?
    var finished: ContinuousClock.Instant?
}

/// One request in the scheduler: its inputs, the events it produced so far (consumed by the
/// connection's thread), and whether the client is still there.
final class GenerationJob: @unchecked Sendable {
    let request: GenerationRequest
    /// Polled by the scheduler before every step (the connection's `isPeerGone`).
    private let clientGone: @Sendable () -> Bool
    private let condition = NSCondition()
    private var events: [GenerationEvent] = []
    private var cancelled = false
    /// Told the summary and timing when the job finishes (the server's metrics).
    private let observer: (@Sendable (GenerationSummary, JobTiming) -> Void)?
    private var timing = JobTiming()

    init(
        _ request: GenerationRequest, clientGone: @escaping @Sendable () -> Bool = { false },
        observer: (@Sendable (GenerationSummary, JobTiming) -> Void)? = nil
    ) {
        self.request = request
        self.clientGone = clientGone
        self.observer = observer
    }

    /// Scheduler side: the job got a slot (its prompt is read from now on).
    func markAdmitted() {
        condition.lock()
        timing.admitted = .now
        condition.unlock()
    }

    /// Scheduler side: hands an event to the waiting connection.
    func post(_ event: GenerationEvent) {
        condition.lock()
        switch event {
        case .text: if timing.firstText == nil { timing.firstText = .now }
        case .finished: timing.finished = .now
        case .failed: break
        }
        let timing = self.timing
        events.append(event)
        condition.signal()
        condition.unlock()
        if case .finished(let summary) = event { observer?(summary, timing) }
    }

    /// Connection side: the next events, waiting for at least one.
    func take() -> [GenerationEvent] {
        take(waitingAtMost: nil)
    }

    /// Connection side: the next events, or none once `limit` has passed without any.
    func take(waitingAtMost limit: Duration?) -> [GenerationEvent] {
        let deadline = limit.map { Date().addingTimeInterval(Self.seconds($0)) }
        condition.lock()
        defer { condition.unlock() }
        while events.isEmpty {
            if let deadline {
                if !condition.wait(until: deadline) && events.isEmpty { return [] }
            } else {
                condition.wait()
            }
        }
        let taken = events
        events.removeAll()
        return taken
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) * 1e-18
    }

    /// Connection side: the answer can no longer be delivered (a write failed).
    func cancel() {
        condition.lock()
        cancelled = true
        condition.unlock()
    }

    /// Scheduler side: whether to stop generating for this job.
    var isAbandoned: Bool {
        condition.lock()
        let flagged = cancelled
        condition.unlock()
        return flagged || clientGone()
    }
}

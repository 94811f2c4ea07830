import PhiFormats

/// How every API writes a job's answer as server-sent events while it is generated (chat
/// completions, Responses, Anthropic Messages differ only in the events they write): hands
/// each event to the API's encoder; while nothing is generated (the request waits for a slot,
/// or a long prompt is read) writes the API's keep-alive every `keepAlive`, so proxies and
/// clients with read timeouts keep waiting. A failed write (the client is gone) cancels the
/// job, which frees its slot at the scheduler's next step; its events are still taken to the
/// last, so the access log says how it ended.
struct JobStream {
    let job: GenerationJob
    let channel: ResponseChannel
    var keepAlive: Duration = .seconds(10)
    /// Written after `keepAlive` of silence: an SSE comment, which every SSE client ignores,
    /// or an API's own ping event.
    var keepAliveBytes: [UInt8] = Array(": keep-alive\n\n".utf8)

    static let headers = [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")]

    /// Starts the stream, calls `begin`, then `handle` for `first` (text the answer starts
    /// with before what is generated) and every event of the job; the stream is finished
    /// after its last event (`.finished` or `.failed`).
    func run(
        first: [GenerationEvent] = [], begin: () throws -> Void,
        handle: (GenerationEvent) throws -> Void
    ) {
        var ended = false
        do {
            try channel.startStream(status: 200, headers: Self.headers)
            try begin()
            var pending = first
            while !ended {
                let events = pending + job.take(waitingAtMost: pending.isEmpty ? keepAlive : .zero)
                pending = []
                if events.isEmpty {
                    try channel.write(keepAliveBytes)
                    continue
                }
                // The job's last event may come with others: once taken, the job is over
                // even if a write fails before it is handled.
                ended = events.contains { note($0) }
                for event in events { try handle(event) }
            }
            try channel.finish()
        } catch {
            job.cancel()
            while !ended {
                for event in job.take() where note(event) { ended = true }
            }
        }
    }

    /// Puts a last event in the access log; true for a last event.
    private func note(_ event: GenerationEvent) -> Bool {
        switch event {
        case .text: return false
        case .failed(let error):
            channel.logNote = "failed: \(CompletionHandler.apiError(error).message)"
        case .finished(let summary):
            channel.logNote = CompletionHandler.logNote(summary)
        }
        return true
    }
}

/// A whole answer, taken from a job once it ended.
struct CollectedAnswer {
    /// The text the answer was made to start with, then the generated text.
    var text: String
    var logprobs: [TokenLogprob]
    var summary: GenerationSummary

    /// Waits for the job's last event; a failure is thrown as the API error to answer.
    init(_ job: GenerationJob, start: String = "", channel: ResponseChannel) throws(APIError) {
        var text = start
        var logprobs: [TokenLogprob] = []
        while true {
            for event in job.take() {
                switch event {
                case .text(let piece, let entries):
                    text += piece
                    logprobs += entries
                case .failed(let error):
                    throw CompletionHandler.apiError(error)
                case .finished(let summary):
                    channel.logNote = CompletionHandler.logNote(summary)
                    (self.text, self.logprobs, self.summary) = (text, logprobs, summary)
                    return
                }
            }
        }
    }
}

extension ResponseChannel {
    /// One server-sent event with a name (`event: …`), as the Responses and Messages APIs
    /// send them.
    func writeEvent(_ name: String, _ data: JSONValue) throws {
        try write(Array("event: \(name)\ndata: \(data.serialized())\n\n".utf8))
    }
}

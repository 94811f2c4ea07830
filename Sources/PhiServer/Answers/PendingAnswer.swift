import PhiFormats

/// A request the scheduler has taken, as every API answers it (chat completions, Responses,
/// Anthropic Messages differ only in the JSON they write): whole once it ended (`collect`),
/// or as server-sent events while it is generated (`stream`). Both start the answer with
/// `answerStart` (echo, a forced call start) and, when the model was offered tools, hand the
/// API its calls parsed out of the text (streaming holds the text from `<|tool_call|>` on
/// until the answer is complete).
struct PendingAnswer {
    let job: GenerationJob
    let channel: ResponseChannel
    /// Text the answer starts with before what is generated.
    var answerStart = ""
    var parseTools = false
    /// `parallel_tool_calls`: false keeps only the first call.
    var parallelToolCalls = true
    /// How long a stream may stay silent (queued, or a long prompt being read) before the
    /// keep-alive tells proxies and clients it is still coming.
    var keepAlive: Duration = .seconds(10)
    /// Failures as the client reads them (no paths of the server's files).
    let errorText: ErrorText

    struct Whole {
        /// nil when the answer is only calls (and whitespace).
        var content: String?
        var calls: [ToolCall]
        var logprobs: [TokenLogprob]
        var summary: GenerationSummary
    }

    /// Waits for the job's last event; a failure is thrown as the API error to answer.
    func collect(callIDPrefix: String = "call_") throws(APIError) -> Whole {
        var text = answerStart
        var logprobs: [TokenLogprob] = []
        while true {
            for event in job.take() {
                switch event {
                case .text(let piece, let entries):
                    text += piece
                    logprobs += entries
                case .failed(let error):
                    throw CompletionHandler.apiError(error, errorText)
                case .finished(let summary):
                    channel.logNote = CompletionHandler.logNote(summary)
                    guard parseTools else {
                        return Whole(content: text, calls: [], logprobs: logprobs, summary: summary)
                    }
                    let (content, calls) = ToolCallSyntax.parse(
                        text, parallel: parallelToolCalls,
                        makeID: { CompletionHandler.newID(callIDPrefix) })
                    return Whole(content: content, calls: calls, logprobs: logprobs, summary: summary)
                }
            }
        }
    }

    /// Starts the stream and calls `begin`; then `text` with each piece that can be sent
    /// (and the log-probabilities of its tokens), and at the end `finish` with the text held
    /// back for calls (nil without tools) and the calls, or `failed`; then finishes the
    /// stream. `keepAliveBytes` go out after `keepAlive` of silence: an SSE comment, which
    /// every SSE client ignores, or an API's own ping event. A failed write (the client is
    /// gone) cancels the job, which frees its slot at the scheduler's next step; its events
    /// are still taken to the last, so the access log says how it ended.
    func stream(
        keepAliveBytes: [UInt8] = Array(": keep-alive\n\n".utf8), callIDPrefix: String = "call_",
        begin: () throws -> Void, text: (String, [TokenLogprob]) throws -> Void,
        finish: (_ held: String?, _ calls: [ToolCall], GenerationSummary) throws -> Void,
        failed: (APIError) throws -> Void
    ) {
        var tools = ToolCallStream()
        var ended = false
        do {
            try channel.startStream(
                status: 200,
                headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            try begin()
            var pending: [GenerationEvent] = answerStart.isEmpty ? [] : [.text(answerStart, [])]
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
                for event in events {
                    switch event {
                    case .text(let piece, let entries):
                        try text(parseTools ? tools.append(piece) : piece, entries)
                    case .failed(let error):
                        try failed(CompletionHandler.apiError(error, errorText))
                    case .finished(let summary):
                        // Nobody reads a cancelled answer's end.
                        guard summary.finishReason != .cancelled else { break }
                        let (held, calls) =
                            parseTools
                            ? tools.finish(parallel: parallelToolCalls) {
                                CompletionHandler.newID(callIDPrefix)
                            } : (nil, [])
                        try finish(held, calls, summary)
                    }
                }
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
            channel.logNote = "failed: \(CompletionHandler.apiError(error, errorText).message)"
        case .finished(let summary):
            channel.logNote = CompletionHandler.logNote(summary)
        }
        return true
    }
}

extension ResponseChannel {
    /// One server-sent event with a name (`event: …`), as the Responses and Messages APIs
    /// send them.
    func writeEvent(_ name: String, _ data: JSONValue) throws {
        try write(Array("event: \(name)\ndata: \(data.serialized())\n\n".utf8))
    }
}

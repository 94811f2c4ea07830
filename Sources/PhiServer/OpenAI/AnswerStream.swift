import PhiFormats

/// Writes one answer as server-sent events while it is generated: `data: {chunk}` blocks,
/// the finish reason, the usage when asked for, then `data: [DONE]`. With tools, text from
/// `<|tool_call|>` on is held until the answer is complete, then sent as `tool_calls` (or as
/// content, when it is not a valid call). While nothing is generated (the request waits for
/// a slot, or a long prompt is read) a `: keep-alive` comment goes out every `keepAlive`, so
/// proxies and clients with read timeouts keep waiting; SSE clients ignore comments.
struct AnswerStream {
    let job: GenerationJob
    let channel: ResponseChannel
    let bodies: ResponseBodies
    let includeUsage: Bool
    let parseTools: Bool
    /// Failures as the client reads them (no paths of the server's files).
    let errorText: ErrorText
    /// `parallel_tool_calls`: false sends only the first call.
    var parallelToolCalls = true
    /// Text the answer starts with before the generated text (`echo`, a forced call start).
    var answerStart = ""
    var keepAlive: Duration = .seconds(10)

    func run() {
        var ended = false
        do {
            try channel.startStream(
                status: 200,
                headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            try stream(ended: &ended)
        } catch {
            // The client is gone: free the slot now, and log what was generated until the
            // scheduler noticed (it ends the job at its next step).
            job.cancel()
            while !ended {
                for event in job.take() {
                    switch event {
                    case .text: continue
                    case .failed(let error):
                        channel.logNote = "failed: \(CompletionHandler.apiError(error, errorText).message)"
                        ended = true
                    case .finished(let summary):
                        channel.logNote = CompletionHandler.logNote(summary)
                        ended = true
                    }
                }
            }
        }
    }

    /// `ended`: set once the job's last event (finished or failed) was taken.
    private func stream(ended: inout Bool) throws {
        let wantsLogprobs = job.request.logprobs != nil
        if bodies.endpoint == .chat {
            try send(
                bodies.chunk(
                    content: "", role: true, logprobs: nil, usageNull: includeUsage))
        }
        var tools = ToolCallStream()
        var pending: [GenerationEvent] = answerStart.isEmpty ? [] : [.text(answerStart, [])]
        while true {
            let events = pending + job.take(waitingAtMost: pending.isEmpty ? keepAlive : .zero)
            pending = []
            if events.isEmpty {
                try channel.write(Array(": keep-alive\n\n".utf8))
                continue
            }
            // The job's last event may come with others: once taken, the job is over even if
            // a write fails before it is handled.
            for event in events {
                switch event {
                case .text: continue
                case .failed: ended = true
                case .finished(let summary):
                    ended = true
                    channel.logNote = CompletionHandler.logNote(summary)
                }
            }
            for event in events {
                switch event {
                case .text(let text, let entries):
                    let content = parseTools ? tools.append(text) : text
                    guard !content.isEmpty || !entries.isEmpty else { continue }
                    try send(
                        bodies.chunk(
                            content: content, logprobs: wantsLogprobs ? entries : nil,
                            usageNull: includeUsage))
                case .failed(let error):
                    let apiError = CompletionHandler.apiError(error, errorText)
                    channel.logNote = "failed: \(apiError.message)"
                    try send(apiError.json)
                    try channel.finish()
                    return
                case .finished(let summary):
                    guard summary.finishReason != .cancelled else {
                        try channel.finish()
                        return
                    }
                    var calls: [ToolCall] = []
                    if parseTools {
                        let (content, parsed) = tools.finish(parallel: parallelToolCalls) {
                            CompletionHandler.newID("call_")
                        }
                        calls = parsed
                        if let content, !content.isEmpty {
                            try send(bodies.chunk(content: content, logprobs: nil, usageNull: includeUsage))
                        }
                        if !calls.isEmpty {
                            try send(bodies.chunk(calls: calls, logprobs: nil, usageNull: includeUsage))
                        }
                    }
                    try send(
                        bodies.chunk(
                            logprobs: nil,
                            finishReason: CompletionHandler.finishReason(summary, calls: calls),
                            usageNull: includeUsage))
                    if includeUsage { try send(bodies.usageChunk(summary)) }
                    try channel.write(Array("data: [DONE]\n\n".utf8))
                    try channel.finish()
                    return
                }
            }
        }
    }

    private func send(_ value: JSONValue) throws {
        try channel.write(Array("data: \(value.serialized())\n\n".utf8))
    }
}

import PhiFormats

/// Writes one answer as server-sent events while it is generated: `data: {chunk}` blocks,
/// the finish reason, the usage when asked for, then `data: [DONE]`. With tools, text from
/// `<|tool_call|>` on is held until the answer is complete, then sent as `tool_calls` (or as
/// content, when it is not a valid call). While nothing is generated (the request waits for
/// a slot, or a long prompt is read) a `: keep-alive` comment goes out every `keepAlive`, so
/// proxies and clients with read timeouts keep waiting; SSE clients ignore comments.
struct AnswerStream {
    /// The request's answers (`n` per prompt), streamed one after another, each chunk
    /// carrying its choice's index; they are generated together meanwhile.
    let answers: [Answer]
    let channel: ResponseChannel
    let bodies: ResponseBodies
    let includeUsage: Bool
    let parseTools: Bool
    /// Failures as the client reads them (no paths of the server's files).
    let errorText: ErrorText
    /// `parallel_tool_calls`: false sends only the first call.
    var parallelToolCalls = true
    var keepAlive: Duration = .seconds(10)

    func run() {
        var ended = Set<Int>()
        var summaries: [GenerationSummary] = []
        do {
            try channel.startStream(
                status: 200,
                headers: [("Content-Type", "text/event-stream"), ("Cache-Control", "no-cache")])
            for answer in answers {
                guard let summary = try stream(answer, ended: &ended) else {
                    drain(ended: &ended)
                    return
                }
                summaries.append(summary)
            }
            channel.logNote = CompletionHandler.logNote(Answer.usage(answers, summaries))
            if includeUsage { try send(bodies.usageChunk(Answer.usage(answers, summaries))) }
            try channel.write(Array("data: [DONE]\n\n".utf8))
            try channel.finish()
        } catch {
            // The client is gone: free the slots now, and log what was generated until the
            // scheduler noticed (it ends the jobs at their next step).
            drain(ended: &ended)
        }
    }

    /// Abandons the answers not yet over and waits for their last events.
    private func drain(ended: inout Set<Int>) {
        for answer in answers where !ended.contains(answer.index) { answer.job.cancel() }
        for answer in answers where !ended.contains(answer.index) {
            while !ended.contains(answer.index) {
                for event in answer.job.take() {
                    switch event {
                    case .text: continue
                    case .failed(let error):
                        channel.logNote = "failed: \(CompletionHandler.apiError(error, errorText).message)"
                        ended.insert(answer.index)
                    case .finished(let summary):
                        channel.logNote = CompletionHandler.logNote(summary)
                        ended.insert(answer.index)
                    }
                }
            }
        }
    }

    /// Streams one answer up to its finish chunk; returns its summary, or nil when the
    /// stream ended early (an error was sent, or nobody reads it any more).
    private func stream(_ answer: Answer, ended: inout Set<Int>) throws -> GenerationSummary? {
        let job = answer.job
        let index = answer.index
        let wantsLogprobs = job.request.logprobs != nil
        if bodies.endpoint == .chat {
            try send(
                bodies.chunk(
                    index: index, content: "", role: true, logprobs: nil, usageNull: includeUsage))
        }
        var tools = ToolCallStream()
        var pending: [GenerationEvent] = answer.start.isEmpty ? [] : [.text(answer.start, [])]
        while true {
            let events = pending + job.take(waitingAtMost: pending.isEmpty ? keepAlive : .zero)
            pending = []
            if events.isEmpty {
                try channel.write(Array(": keep-alive\n\n".utf8))
                continue
            }
            // The job's last event may come with others: once taken, the job is over even if
            // a write fails before it is handled, and the log says how it ended (a client
            // that hung up while its job was being cancelled logs finish=cancelled, not only
            // the failed write).
            for event in events {
                switch event {
                case .text: continue
                case .failed(let error):
                    ended.insert(index)
                    channel.logNote = "failed: \(CompletionHandler.apiError(error, errorText).message)"
                case .finished(let summary):
                    ended.insert(index)
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
                            index: index, content: content,
                            logprobs: wantsLogprobs ? entries : nil, usageNull: includeUsage))
                case .failed(let error):
                    try send(CompletionHandler.apiError(error, errorText).json)
                    try channel.finish()
                    return nil
                case .finished(let summary):
                    guard summary.finishReason != .cancelled else {
                        try channel.finish()
                        return nil
                    }
                    var calls: [ToolCall] = []
                    if parseTools {
                        let (content, parsed) = tools.finish(parallel: parallelToolCalls) {
                            CompletionHandler.newID("call_")
                        }
                        calls = parsed
                        if let content, !content.isEmpty {
                            try send(
                                bodies.chunk(
                                    index: index, content: content, logprobs: nil,
                                    usageNull: includeUsage))
                        }
                        if !calls.isEmpty {
                            try send(
                                bodies.chunk(
                                    index: index, calls: calls, logprobs: nil,
                                    usageNull: includeUsage))
                        }
                    }
                    try send(
                        bodies.chunk(
                            index: index, logprobs: nil,
                            finishReason: CompletionHandler.finishReason(summary, calls: calls),
                            usageNull: includeUsage))
                    return summary
                }
            }
        }
    }

    private func send(_ value: JSONValue) throws {
        try channel.write(Array("data: \(value.serialized())\n\n".utf8))
    }
}

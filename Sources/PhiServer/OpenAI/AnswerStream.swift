import PhiFormats

/// Writes one chat or text completion as server-sent events while it is generated (through
/// `JobStream`): `data: {chunk}` blocks, the finish reason, the usage when asked for, then
/// `data: [DONE]`. With tools, text from `<|tool_call|>` on is held until the answer is
/// complete, then sent as `tool_calls` (or as content, when it is not a valid call).
struct AnswerStream {
    let job: GenerationJob
    let channel: ResponseChannel
    let bodies: ResponseBodies
    let includeUsage: Bool
    let parseTools: Bool
    /// `parallel_tool_calls`: false sends only the first call.
    var parallelToolCalls = true
    /// Text the answer starts with before the generated text (`echo`, a forced call start).
    var answerStart = ""
    var keepAlive: Duration = .seconds(10)

    func run() {
        let wantsLogprobs = job.request.logprobs != nil
        var tools = ToolCallStream()
        JobStream(job: job, channel: channel, keepAlive: keepAlive).run(
            first: answerStart.isEmpty ? [] : [.text(answerStart, [])],
            begin: {
                if bodies.endpoint == .chat {
                    try send(bodies.chunk(content: "", role: true, logprobs: nil, usageNull: includeUsage))
                }
            },
            handle: { event in
                switch event {
                case .text(let text, let entries):
                    let content = parseTools ? tools.append(text) : text
                    guard !content.isEmpty || !entries.isEmpty else { return }
                    try send(
                        bodies.chunk(
                            content: content, logprobs: wantsLogprobs ? entries : nil,
                            usageNull: includeUsage))
                case .failed(let error):
                    try send(CompletionHandler.apiError(error).json)
                case .finished(let summary):
                    guard summary.finishReason != .cancelled else { return }
                    try finish(summary, tools: &tools)
                }
            })
    }

    private func finish(_ summary: GenerationSummary, tools: inout ToolCallStream) throws {
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
                logprobs: nil, finishReason: CompletionHandler.finishReason(summary, calls: calls),
                usageNull: includeUsage))
        if includeUsage { try send(bodies.usageChunk(summary)) }
        try channel.write(Array("data: [DONE]\n\n".utf8))
    }

    private func send(_ value: JSONValue) throws {
        try channel.write(Array("data: \(value.serialized())\n\n".utf8))
    }
}

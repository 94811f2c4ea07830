import PhiFormats

/// Writes one chat or text completion as server-sent events while it is generated:
/// `data: {chunk}` blocks, the finish reason, the usage when asked for, then `data: [DONE]`;
/// calls (with tools) as one `tool_calls` chunk once the answer is complete.
struct AnswerStream {
    let answer: PendingAnswer
    let bodies: ResponseBodies
    let includeUsage: Bool

    func run() {
        let wantsLogprobs = answer.job.request.logprobs != nil
        answer.stream(
            begin: {
                if bodies.endpoint == .chat {
                    try send(bodies.chunk(content: "", role: true, logprobs: nil, usageNull: includeUsage))
                }
            },
            text: { content, entries in
                guard !content.isEmpty || !entries.isEmpty else { return }
                try send(
                    bodies.chunk(
                        content: content, logprobs: wantsLogprobs ? entries : nil,
                        usageNull: includeUsage))
            },
            finish: { held, calls, summary in
                if let held, !held.isEmpty {
                    try send(bodies.chunk(content: held, logprobs: nil, usageNull: includeUsage))
                }
                if !calls.isEmpty {
                    try send(bodies.chunk(calls: calls, logprobs: nil, usageNull: includeUsage))
                }
                try send(
                    bodies.chunk(
                        logprobs: nil,
                        finishReason: CompletionHandler.finishReason(summary, calls: calls),
                        usageNull: includeUsage))
                if includeUsage { try send(bodies.usageChunk(summary)) }
                try answer.channel.write(Array("data: [DONE]\n\n".utf8))
            },
            failed: { error in try send(error.json) })
    }

    private func send(_ value: JSONValue) throws {
        try answer.channel.write(Array("data: \(value.serialized())\n\n".utf8))
    }
}

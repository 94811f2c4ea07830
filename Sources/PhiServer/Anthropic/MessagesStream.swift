import PhiFormats

/// Writes one message as the Messages API streams it (the events the official SDK's stream
/// accumulates):
///
///     message_start, ping
///     text: content_block_start (text), content_block_delta (text_delta) …, content_block_stop
///     per call: content_block_start (tool_use, input {}), content_block_delta
///       (input_json_delta with the arguments), content_block_stop
///     message_delta (stop_reason, stop_sequence, usage), message_stop
///
/// or an `error` event. While nothing is generated, `ping` events keep the stream alive.
/// Text from `<|tool_call|>` on is held until the answer is complete, then sent as calls.
struct MessagesStream {
    let answer: PendingAnswer
    let bodies: MessageBodies

    private static let ping = JSONValue.object([("type", .string("ping"))])

    private final class State {
        var blocks = 0
        var textOpen = false
    }

    func run() {
        let state = State()
        answer.stream(
            keepAliveBytes: Array("event: ping\ndata: \(Self.ping.serialized())\n\n".utf8),
            callIDPrefix: "toolu_",
            begin: {
                let usage = MessageBodies.startUsage(promptTokens: answer.job.request.prompt.count)
                try send("message_start", [("message", bodies.message(content: [], stop: nil, usage: usage))])
                try answer.channel.writeEvent("ping", Self.ping)
            },
            text: { text, _ in try sendText(text, state) },
            finish: { held, calls, summary in try finish(held, calls, summary, state) },
            failed: { error in try answer.channel.writeEvent("error", AnthropicError.json(error)) })
    }

    private func sendText(_ text: String, _ state: State) throws {
        guard !text.isEmpty else { return }
        if !state.textOpen {
            try send(
                "content_block_start",
                [("index", .int(state.blocks)), ("content_block", MessageBodies.textBlock(""))])
            state.textOpen = true
        }
        try send(
            "content_block_delta",
            [
                ("index", .int(state.blocks)),
                ("delta", .object([("type", .string("text_delta")), ("text", .string(text))])),
            ])
    }

    private func closeText(_ state: State) throws {
        guard state.textOpen else { return }
        try send("content_block_stop", [("index", .int(state.blocks))])
        state.textOpen = false
        state.blocks += 1
    }

    private func finish(
        _ held: String?, _ parsed: [ToolCall], _ summary: GenerationSummary, _ state: State
    ) throws {
        let (uses, asText) = MessageBodies.split(parsed)
        let calls = uses.map(\.0)
        try sendText((held ?? "") + asText, state)
        try closeText(state)
        for call in calls {
            let index = JSONValue.int(state.blocks)
            try send(
                "content_block_start",
                [("index", index), ("content_block", MessageBodies.toolUseBlock(call, input: .object([])))])
            try send(
                "content_block_delta",
                [
                    ("index", index),
                    (
                        "delta",
                        .object([
                            ("type", .string("input_json_delta")),
                            ("partial_json", .string(call.arguments)),
                        ])
                    ),
                ])
            try send("content_block_stop", [("index", index)])
            state.blocks += 1
        }
        let stop = MessageBodies.stop(summary, calls: calls)
        try send(
            "message_delta",
            [
                (
                    "delta",
                    .object([
                        ("stop_reason", .string(stop.reason)),
                        ("stop_sequence", stop.sequence.map(JSONValue.string) ?? .null),
                    ])
                ),
                ("usage", MessageBodies.usage(summary)),
            ])
        try send("message_stop", [])
    }

    private func send(_ type: String, _ members: [(key: String, value: JSONValue)]) throws {
        try answer.channel.writeEvent(type, .object([("type", .string(type))] + members))
    }
}

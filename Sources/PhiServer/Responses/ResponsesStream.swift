import PhiFormats

/// Writes one response as the Responses API streams it (the sequence the official SDK's
/// stream state and Codex parse), each event numbered by `sequence_number`:
///
///     response.created, response.in_progress
///     response.output_item.added (message), response.content_part.added,
///       response.output_text.delta …, response.output_text.done, response.content_part.done,
///       response.output_item.done
///     per call: response.output_item.added (function_call),
///       response.function_call_arguments.delta, …arguments.done, response.output_item.done
///     response.completed | response.incomplete (max_output_tokens) | response.failed
///
/// Text from `<|tool_call|>` on is held until the answer is complete, then sent as calls (or
/// as text, when it is no valid call).
struct ResponsesStream {
    let answer: PendingAnswer
    let object: ResponseObject

    /// What has been sent so far.
    private final class State {
        var sequence = 0
        var output: [JSONValue] = []
        /// The message item's text, once its `output_item.added` went out.
        var messageText: String?
        let messageID = CompletionHandler.newID("msg_")
    }

    func run() {
        let state = State()
        answer.stream(
            begin: {
                try send("response.created", state, [("response", object.body(.inProgress))])
                try send("response.in_progress", state, [("response", object.body(.inProgress))])
            },
            text: { text, _ in try sendText(text, state) },
            finish: { held, calls, summary in try finish(held, calls, summary, state) },
            failed: { error in
                try send(
                    "response.failed", state,
                    [("response", object.body(.failed, output: state.output, error: error))])
            })
    }

    private func sendText(_ text: String, _ state: State) throws {
        guard !text.isEmpty else { return }
        if state.messageText == nil { try openMessage(state) }
        state.messageText! += text
        try send(
            "response.output_text.delta", state,
            [
                ("item_id", .string(state.messageID)), ("output_index", .int(0)),
                ("content_index", .int(0)), ("delta", .string(text)), ("logprobs", .array([])),
            ])
    }

    private func openMessage(_ state: State) throws {
        state.messageText = ""
        try send(
            "response.output_item.added", state,
            [
                ("output_index", .int(0)),
                ("item", object.message(id: state.messageID, text: nil, status: .inProgress)),
            ])
        try send(
            "response.content_part.added", state,
            [
                ("item_id", .string(state.messageID)), ("output_index", .int(0)),
                ("content_index", .int(0)), ("part", ResponseObject.textPart("")),
            ])
    }

    private func finish(
        _ held: String?, _ calls: [ToolCall], _ summary: GenerationSummary, _ state: State
    ) throws {
        try sendText(held ?? "", state)
        let status = ResponseObject.status(summary)
        if state.messageText == nil && calls.isEmpty { try openMessage(state) }
        if let text = state.messageText {
            let item = [("item_id", JSONValue.string(state.messageID)), ("output_index", .int(0))]
            try send(
                "response.output_text.done", state,
                item + [("content_index", .int(0)), ("text", .string(text)), ("logprobs", .array([]))])
            try send(
                "response.content_part.done", state,
                item + [("content_index", .int(0)), ("part", ResponseObject.textPart(text))])
            let message = object.message(id: state.messageID, text: text, status: status)
            try send("response.output_item.done", state, [("output_index", .int(0)), ("item", message)])
            state.output.append(message)
        }
        for call in calls {
            let index = JSONValue.int(state.output.count)
            let itemID = JSONValue.string(ResponseObject.itemID(of: call))
            try send(
                "response.output_item.added", state,
                [
                    ("output_index", index),
                    ("item", object.functionCall(call, arguments: "", status: .inProgress)),
                ])
            try send(
                "response.function_call_arguments.delta", state,
                [("item_id", itemID), ("output_index", index), ("delta", .string(call.arguments))])
            try send(
                "response.function_call_arguments.done", state,
                [
                    ("item_id", itemID), ("output_index", index),
                    ("arguments", .string(call.arguments)),
                ] + object.tools.nameMembers(of: call))
            let item = object.functionCall(call, status: .completed)
            try send("response.output_item.done", state, [("output_index", index), ("item", item)])
            state.output.append(item)
        }
        try send(
            status == .incomplete ? "response.incomplete" : "response.completed", state,
            [("response", object.body(status, output: state.output, summary: summary))])
    }

    private func send(
        _ type: String, _ state: State, _ members: [(key: String, value: JSONValue)]
    ) throws {
        let event = JSONValue.object(
            [("type", .string(type)), ("sequence_number", .int(state.sequence))] + members)
        state.sequence += 1
        try answer.channel.writeEvent(type, event)
    }
}

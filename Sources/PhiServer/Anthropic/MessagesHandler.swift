import PhiFormats

/// Answers `POST /v1/messages` and `/v1/messages/count_tokens` (Anthropic's Messages API, as
/// Claude Code and the official SDKs speak it): the request is translated into a chat
/// request and goes through the same scheduler and prompt cache as the OpenAI endpoints;
/// errors are in Anthropic's shape.
struct MessagesHandler: Sendable {
    let completions: CompletionHandler

    private var contextSize: Int { completions.scheduler.configuration.contextSize }

    func handle(body: [UInt8], channel: ResponseChannel) {
        do {
            let request = try MessagesRequest(body: body, contextSize: contextSize)
            let answer = try completions.start(request.completion, channel: channel)
            let bodies = MessageBodies(
                id: CompletionHandler.newID("msg_"), model: completions.answeringModel(request.completion))
            if request.completion.stream {
                MessagesStream(answer: answer, bodies: bodies).run()
                return
            }
            let whole = try answer.collect(callIDPrefix: "toolu_")
            let (uses, asText) = MessageBodies.split(whole.calls)
            let text = (whole.content ?? "") + asText
            let content =
                (text.isEmpty ? [] : [MessageBodies.textBlock(text)])
                + uses.map { MessageBodies.toolUseBlock($0.0, input: $0.1) }
            try channel.sendJSON(
                JSONBody(
                    value: bodies.message(
                        content: content, stop: MessageBodies.stop(whole.summary, calls: uses.map(\.0)),
                        usage: MessageBodies.usage(whole.summary))))
        } catch let error as APIError {
            try? channel.sendAnthropic(error)
        } catch {
            try? channel.sendAnthropic(APIError.server("\(error)"))
        }
    }

    /// `{"input_tokens": N}`: the prompt a Messages request with this body would render to,
    /// counted with the model's own template and tokenizer.
    func countTokens(body: [UInt8], channel: ResponseChannel) {
        do {
            let request = try MessagesRequest(body: body, contextSize: contextSize, countOnly: true)
            _ = try completions.adapter(for: request.completion)  // the names must exist
            let tokens = try PromptBuilder(container: completions.container, errorText: completions.errorText)
                .tokens(for: request.completion.input)
            try channel.sendJSON(JSONBody(value: .object([("input_tokens", .int(tokens.count))])))
        } catch let error as APIError {
            try? channel.sendAnthropic(error)
        } catch {
            try? channel.sendAnthropic(APIError.server("\(error)"))
        }
    }
}

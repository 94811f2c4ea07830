import Foundation
import PhiFormats

/// Answers `POST /v1/responses`: the request is translated into a chat request and goes
/// through the same scheduler and prompt cache as chat completions (so a conversation sent
/// through either reuses the same cached tokens), and the answer is written as a response
/// object or its event stream. Errors are in OpenAI's shape, as the Responses API has them.
struct ResponsesHandler: Sendable {
    let completions: CompletionHandler

    func handle(body: [UInt8], channel: ResponseChannel) {
        do {
            let request = try ResponsesRequest(
                body: body, contextSize: completions.scheduler.configuration.contextSize)
            let answer = try completions.start(request.completion, channel: channel)
            let object = ResponseObject(
                id: CompletionHandler.newID("resp_"), createdAt: Int(Date().timeIntervalSince1970),
                model: completions.answeringModel(request.completion), echo: request.echo, tools: request.tools)
            if request.completion.stream {
                ResponsesStream(answer: answer, object: object).run()
                return
            }
            let whole = try answer.collect()
            let status = ResponseObject.status(whole.summary)
            let output = object.output(
                content: whole.content, calls: whole.calls,
                messageID: CompletionHandler.newID("msg_"), status: status)
            try channel.sendJSON(
                JSONBody(value: object.body(status, output: output, summary: whole.summary)))
        } catch let error as APIError {
            try? channel.send(error)
        } catch {
            try? channel.send(APIError.server("\(error)"))
        }
    }
}

import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// Answers `POST /v1/chat/completions` and `/v1/completions`: checks the request, renders
/// the prompt, hands the job to the scheduler and writes what it produces, streamed as
/// server-sent events or as one JSON answer. Runs on the connection's thread, which waits
/// for the scheduler; a failed write abandons the job, which frees its slot at once.
struct CompletionHandler: Sendable {
    let container: ModelContainer
    let scheduler: Scheduler
    /// The id `/v1/models` lists; requests may name it, the alias they were started with,
    /// or the model's directory.
    let modelID: String
    let modelNames: Set<String>
    /// How long a streamed answer may stay silent (queued, or a long prompt being read)
    /// before a `: keep-alive` comment tells proxies and clients it is still coming.
    var keepAlive: Duration = .seconds(10)

    func handle(_ endpoint: CompletionRequest.Endpoint, body: [UInt8], channel: ResponseChannel) {
        do {
            let request = try CompletionRequest(endpoint, body: body)
            if let model = request.model, !modelNames.contains(model) {
                throw APIError.unknownModel(model, served: modelID)
            }
            let (generation, answerStart) = try generation(request)
            let job = GenerationJob(generation) { [channel] in channel.isPeerGone }
            do {
                try scheduler.submit(job)
            } catch {
                switch error {
                case .queueFull(let waiting, _): throw APIError.queueFull(waiting: waiting)
                case .stopping: throw APIError.stopping
                }
            }
            let bodies = ResponseBodies(
                endpoint: endpoint, id: Self.newID(endpoint == .chat ? "chatcmpl-" : "cmpl-"),
                created: Int(Date().timeIntervalSince1970), model: modelID)
            let tools: Bool = if case .chat(_, let tools) = request.input { !tools.isEmpty } else { false }
            if request.stream {
                AnswerStream(
                    job: job, channel: channel, bodies: bodies, includeUsage: request.includeUsage,
                    parseTools: tools, errorText: errorText, parallelToolCalls: request.parallelToolCalls,
                    answerStart: answerStart, keepAlive: keepAlive
                ).run()
            } else {
                try answer(
                    job, bodies, channel: channel, parseTools: tools,
                    parallelToolCalls: request.parallelToolCalls, start: answerStart)
            }
        } catch let error as APIError {
            try? channel.send(error)
        } catch {
            try? channel.send(APIError.server(errorText.message(of: error)))
        }
    }

    /// The scheduler's request (the prompt's tokens, checked against the context, and the
    /// sampling parameters), and the text the answer starts with before what is generated:
    /// the prompt for `echo`, the call's start forced by `tool_choice`.
    private func generation(_ request: CompletionRequest) throws(APIError)
        -> (GenerationRequest, answerStart: String)
    {
        let builder = PromptBuilder(container: container, errorText: errorText)
        var prompt = try builder.tokens(for: request.input)
        var answerStart = ""
        if request.echo {
            answerStart = builder.text(of: request.input)
        }
        if let forced = try builder.forcedStart(request.toolChoice) {
            prompt += try builder.continuation(forced)
            answerStart += forced
        }
        let context = scheduler.configuration.contextSize
        guard !prompt.isEmpty else {
            throw .invalidRequest("The prompt is empty.", param: "prompt")
        }
        guard prompt.count < context else {
            throw .contextLength(prompt: prompt.count, completion: nil, context: context)
        }
        if let asked = request.maxTokens, prompt.count + asked > context {
            throw .contextLength(prompt: prompt.count, completion: asked, context: context)
        }
        let fallback = request.endpoint == .chat ? context - prompt.count : 16
        let parameters = GenerationParameters(
            maxTokens: request.maxTokens ?? min(fallback, context - prompt.count),
            temperature: Float(request.temperature), topP: Float(request.topP),
            topK: request.topK, minP: Float(request.minP),
            repetitionPenalty: request.repetitionPenalty.map(Float.init),
            seed: request.seed.map { UInt64(bitPattern: Int64($0)) })
        let stopTokens: StopTokens
        do {
            stopTokens = try container.stopTokens()
        } catch {
            throw .server(errorText.message(of: error))
        }
        var generation = GenerationRequest(
            prompt: prompt, parameters: parameters, stopTokens: stopTokens,
            stopStrings: request.stop, logprobs: request.logprobs)
        // The echoed prompt and the answer are one text: "Once" + " upon", not "Onceupon".
        generation.continuesPrompt = request.echo
        return (generation, answerStart)
    }

    /// Waits for the whole answer, then sends it as one JSON object.
    private func answer(
        _ job: GenerationJob, _ bodies: ResponseBodies, channel: ResponseChannel,
        parseTools: Bool, parallelToolCalls: Bool, start: String
    ) throws {
        var text = start
        var logprobs: [TokenLogprob] = []
        while true {
            for event in job.take() {
                switch event {
                case .text(let piece, let entries):
                    text += piece
                    logprobs += entries
                case .failed(let error):
                    throw Self.apiError(error, errorText)
                case .finished(let summary):
                    channel.logNote = Self.logNote(summary)
                    var content: String? = text
                    var calls: [ToolCall] = []
                    if parseTools {
                        (content, calls) = ToolCallSyntax.parse(
                            text, parallel: parallelToolCalls, makeID: { Self.newID("call_") })
                    }
                    let body = bodies.answer(
                        content: content, calls: calls,
                        logprobs: job.request.logprobs == nil ? nil : logprobs,
                        finishReason: Self.finishReason(summary, calls: calls), summary: summary)
                    try channel.sendJSON(JSONBody(value: body))
                    return
                }
            }
        }
    }

    static func finishReason(_ summary: GenerationSummary, calls: [ToolCall]) -> String {
        if !calls.isEmpty { return "tool_calls" }
        return summary.finishReason == .length ? "length" : "stop"
    }

    static func apiError(_ error: any Error, _ text: ErrorText) -> APIError {
        switch error {
        case SchedulerRefusal.stopping: .stopping
        case let failure as SchedulerFailure: .server(text.message(of: failure.error))
        default: .server(text.message(of: error))
        }
    }

    /// Library errors without the paths of the server's files.
    var errorText: ErrorText {
        ErrorText(modelDirectory: container.location.directory, modelID: modelID)
    }

    static func logNote(_ s: GenerationSummary) -> String {
        "tokens=\(s.promptTokens)+\(s.completionTokens) cached=\(s.cachedTokens) "
            + "finish=\(s.finishReason.rawValue)"
    }

    /// `prefix` and 24 random letters and digits, as OpenAI's ids look.
    static func newID(_ prefix: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
        return prefix + String((0..<24).map { _ in alphabet.randomElement()! })
    }
}

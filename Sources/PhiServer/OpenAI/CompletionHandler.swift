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
    /// Counts every finished and refused request, for /metrics.
    var metrics = ServerMetrics()

    func handle(_ endpoint: CompletionRequest.Endpoint, body: [UInt8], channel: ResponseChannel) {
        do {
            let request = try CompletionRequest(endpoint, body: body)
            let answer = try start(request, channel: channel)
            let bodies = ResponseBodies(
                endpoint: endpoint, id: Self.newID(endpoint == .chat ? "chatcmpl-" : "cmpl-"),
                created: Int(Date().timeIntervalSince1970), model: modelID)
            if request.stream {
                AnswerStream(answer: answer, bodies: bodies, includeUsage: request.includeUsage).run()
            } else {
                let whole = try answer.collect()
                let body = bodies.answer(
                    content: whole.content, calls: whole.calls,
                    logprobs: request.logprobs == nil ? nil : whole.logprobs,
                    finishReason: Self.finishReason(whole.summary, calls: whole.calls),
                    summary: whole.summary)
                try channel.sendJSON(JSONBody(value: body))
            }
        } catch let error as APIError {
            try? channel.send(error)
        } catch {
            try? channel.send(APIError.server("\(error)"))
        }
    }

    /// Checks the model name, renders the prompt and queues the job: the one way into the
    /// scheduler for every API (chat completions, Responses, Anthropic Messages), so they
    /// share its slots and its prompt cache.
    func start(_ request: CompletionRequest, channel: ResponseChannel) throws(APIError)
        -> PendingAnswer
    {
        if let model = request.model, !modelNames.contains(model) {
            throw APIError.unknownModel(model, served: modelID)
        }
        let (generation, answerStart) = try generation(request)
        let job = GenerationJob(
            generation, clientGone: { [channel] in channel.isPeerGone }, observer: metrics.record)
        do {
            try scheduler.submit(job)
        } catch {
            if case .queueFull = error { metrics.recordRefusal() }
            switch error {
            case .queueFull(let waiting, _): throw APIError.queueFull(waiting: waiting)
            case .stopping: throw APIError.stopping
            }
        }
        return PendingAnswer(
            job: job, channel: channel, answerStart: answerStart, parseTools: request.offersTools,
            parallelToolCalls: request.parallelToolCalls, keepAlive: keepAlive)
    }

    /// The scheduler's request (the prompt's tokens, checked against the context, and the
    /// sampling parameters), and the text the answer starts with before what is generated:
    /// the prompt for `echo`, the call's start forced by `tool_choice`.
    func generation(_ request: CompletionRequest) throws(APIError)
        -> (GenerationRequest, answerStart: String)
    {
        let builder = PromptBuilder(container: container)
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
        if let asked = request.maxTokens, prompt.count + asked > context, !request.maxTokensIsBound {
            throw .contextLength(prompt: prompt.count, completion: asked, context: context)
        }
        let fallback = request.endpoint == .chat ? context - prompt.count : 16
        let parameters = GenerationParameters(
            maxTokens: min(request.maxTokens ?? fallback, context - prompt.count),
            temperature: Float(request.temperature), topP: Float(request.topP),
            topK: request.topK, minP: Float(request.minP),
            repetitionPenalty: request.repetitionPenalty.map(Float.init),
            seed: request.seed.map { UInt64(bitPattern: Int64($0)) })
        let stopTokens: StopTokens
        do {
            stopTokens = try container.stopTokens()
        } catch {
            throw .server("\(error)")
        }
        let generation = GenerationRequest(
            prompt: prompt, parameters: parameters, stopTokens: stopTokens,
            stopStrings: request.stop, logprobs: request.logprobs)
        return (generation, answerStart)
    }

    static func finishReason(_ summary: GenerationSummary, calls: [ToolCall]) -> String {
        if !calls.isEmpty { return "tool_calls" }
        return summary.finishReason == .length ? "length" : "stop"
    }

    static func apiError(_ error: any Error) -> APIError {
        switch error {
        case SchedulerRefusal.stopping: .stopping
        case let failure as SchedulerFailure:
            .server(
                (failure.error as? any UserFacingError)?.message ?? "\(failure.error)")
        default: .server("\(error)")
        }
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

import Foundation
import PhiEngine
import PhiFormats
import PhiKit

/// Answers `POST /v1/chat/completions` and `/v1/completions`: checks the request, renders
/// the prompts, hands one job per answer (`n` per prompt) to the scheduler, which batches
/// them, and writes what they produce, streamed as server-sent events or as one JSON answer. Runs on the connection's thread, which waits
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
            let answers = try submit(try generations(request), channel: channel)
            let bodies = ResponseBodies(
                endpoint: endpoint, id: Self.newID(endpoint == .chat ? "chatcmpl-" : "cmpl-"),
                created: Int(Date().timeIntervalSince1970), model: answeringModel(request))
            let tools: Bool = if case .chat(_, let tools) = request.input { !tools.isEmpty } else { false }
            if request.stream {
                AnswerStream(
                    answers: answers, channel: channel, bodies: bodies,
                    includeUsage: request.includeUsage, parseTools: tools, errorText: errorText,
                    parallelToolCalls: request.parallelToolCalls, keepAlive: keepAlive
                ).run()
            } else {
                try answer(
                    answers, bodies, channel: channel, parseTools: tools,
                    parallelToolCalls: request.parallelToolCalls)
            }
        } catch let error as APIError {
            try? channel.send(error)
        } catch {
            try? channel.send(APIError.server(errorText.message(of: error)))
        }
    }

    /// The one answer of a request from another API (Responses, Anthropic Messages): checks
    /// the model name, renders the prompt and queues the job through the same scheduler, so
    /// every API shares its slots and its prompt cache.
    func start(_ request: CompletionRequest, channel: ResponseChannel) throws(APIError)
        -> PendingAnswer
    {
        let generations = try generations(request)
        guard generations.count == 1, let answer = try submit(generations, channel: channel).first
        else { throw .invalidRequest("One answer per request here.", param: nil) }
        return PendingAnswer(
            job: answer.job, channel: channel, answerStart: answer.start,
            parseTools: request.offersTools, parallelToolCalls: request.parallelToolCalls,
            keepAlive: keepAlive, errorText: errorText)
    }

    /// The run-time adapter `request` is answered with: the one its `"adapter"` names, else
    /// the one its `"model"` names (vLLM's way of choosing a LoRA), else the server's default
    /// (`--adapter-path`'s, or none). A name that is neither the model nor a loaded adapter
    /// is a 404 naming it.
    func adapter(for request: CompletionRequest) throws(APIError) -> Int? {
        var byModel: Int?
        if let model = request.model {
            byModel = container.adapterIndex(named: model)
            if byModel == nil && !modelNames.contains(model) {
                throw .unknownModel(model, served: modelID)
            }
        }
        guard let name = request.adapter else { return byModel ?? container.defaultAdapter }
        guard let named = container.adapterIndex(named: name) else {
            throw .unknownAdapter(name, loaded: container.adapters.map(\.name))
        }
        if let byModel, byModel != named {
            throw .invalidRequest(
                "'model' names the adapter '\(request.model!)' and 'adapter' names '\(name)': "
                    + "give one", param: "adapter", code: "invalid_value")
        }
        return named
    }

    /// The `"model"` an answer reports: the adapter's name when the request chose one (as
    /// vLLM answers a LoRA request with the LoRA's name, so a client sees which weights
    /// answered), else the served model's id. Call it once `adapter(for:)` accepted the request.
    func answeringModel(_ request: CompletionRequest) -> String {
        if let name = request.adapter { return name }
        if let model = request.model, container.adapterIndex(named: model) != nil { return model }
        return modelID
    }

    /// Queues every answer's job; when one is refused, the ones queued are abandoned.
    private func submit(
        _ generations: [(request: GenerationRequest, start: String, prompt: Int)],
        channel: ResponseChannel
    ) throws(APIError) -> [Answer] {
        var answers: [Answer] = []
        for (request, start, prompt) in generations {
            let job = GenerationJob(
                request, clientGone: { [channel] in channel.isPeerGone }, observer: metrics.record)
            do {
                try scheduler.submit(job)
            } catch {
                if case .queueFull = error { metrics.recordRefusal() }
                for answer in answers { answer.job.cancel() }
                switch error {
                case .queueFull(let waiting, _): throw .queueFull(waiting: waiting)
                case .stopping: throw .stopping
                }
            }
            answers.append(Answer(index: answers.count, prompt: prompt, job: job, start: start))
        }
        return answers
    }

    /// The scheduler's requests: for each prompt (checked against the context), `n` of them
    /// (choice i seeded with `seed + i`, so each is reproducible alone), with the text each
    /// answer starts with before what is generated: the prompt for `echo`, the call's start
    /// forced by `tool_choice`.
    private func generations(_ request: CompletionRequest) throws(APIError)
        -> [(request: GenerationRequest, start: String, prompt: Int)]
    {
        let adapter = try adapter(for: request)
        let builder = PromptBuilder(container: container, errorText: errorText)
        let stopTokens: StopTokens
        do {
            stopTokens = try container.stopTokens()
        } catch {
            throw .server(errorText.message(of: error))
        }
        let makeConstraint = try constraintFactory(
            try RequestedFormat.toolCalls(request) ?? request.answerGrammar)
        let context = scheduler.configuration.contextSize
        var result: [(request: GenerationRequest, start: String, prompt: Int)] = []
        for (index, input) in request.inputs.enumerated() {
            var prompt = try builder.tokens(for: input)
            var answerStart = request.echo ? builder.text(of: input) : ""
            if let forced = try builder.forcedStart(request.toolChoice) {
                prompt += try builder.continuation(forced)
                answerStart += forced
            }
            guard !prompt.isEmpty else {
                throw .invalidRequest("The prompt is empty.", param: "prompt")
            }
            guard prompt.count < context else {
                throw .contextLength(prompt: prompt.count, completion: nil, context: context)
            }
            // More than the context leaves ends there, with "length" (llama-server, ollama).
            let room = context - prompt.count
            var settings = request.settings
            settings[.maxTokens] = .integer(
                min(request.maxTokens ?? (request.endpoint == .chat ? room : 16), room))
            let parameters = container.parameters(settings, for: .serve)
            do throws(GenerationError) {
                try parameters.validate()
            } catch {
                throw .server("the model's generation defaults: \(error.message)")
            }
            try Self.checkRoom(makeConstraint, maxTokens: parameters.maxTokens)
            for choice in 0..<request.choices {
                var seeded = parameters
                seeded.seed = parameters.seed.map { $0 &+ UInt64(choice) }
                var generation = GenerationRequest(
                    prompt: prompt, parameters: seeded, stopTokens: stopTokens,
                    stopStrings: request.stop, logprobs: request.logprobs)
                // The echoed prompt and the answer are one text: "Once" + " upon", not
                // "Onceupon".
                generation.continuesPrompt = request.echo
                generation.adapter = adapter
                generation.makeConstraint = makeConstraint
                result.append((generation, answerStart, index))
            }
        }
        return result
    }

    /// Each answer's own matcher for the request's structured output (nil: free text), over
    /// the model's tokens (built once per model).
    private func constraintFactory(_ grammar: Grammar?) throws(APIError)
        -> (@Sendable () throws -> any TokenConstraint)?
    {
        guard let grammar else { return nil }
        let vocabulary: TokenVocabulary
        do {
            vocabulary = try container.tokenVocabulary()
        } catch {
            throw .server(errorText.message(of: error))
        }
        return { GrammarMatcher(grammar: grammar, vocabulary: vocabulary) }
    }

    /// A 400 naming `max_tokens` when it leaves no room for the format's shortest answer
    /// (the budget-aware mask could not close it in time).
    private static func checkRoom(
        _ makeConstraint: (@Sendable () throws -> any TokenConstraint)?, maxTokens: Int
    ) throws(APIError) {
        guard let makeConstraint, let constraint = try? makeConstraint() else { return }
        do {
            try constraint.checkRoom(maxTokens: maxTokens, naming: "max_tokens")
        } catch {
            let hint = error.hint.map { " (\($0))" } ?? ""
            throw .invalidRequest(
                error.message + hint, param: "max_tokens", code: "invalid_value")
        }
    }

    /// Waits for every answer, then sends them as one JSON object.
    private func answer(
        _ answers: [Answer], _ bodies: ResponseBodies, channel: ResponseChannel,
        parseTools: Bool, parallelToolCalls: Bool
    ) throws {
        var choices: [ResponseBodies.Choice] = []
        var summaries: [GenerationSummary] = []
        for answer in answers {
            var text = answer.start
            var logprobs: [TokenLogprob] = []
            var summary: GenerationSummary?
            while summary == nil {
                for event in answer.job.take() {
                    switch event {
                    case .text(let piece, let entries):
                        text += piece
                        logprobs += entries
                    case .failed(let error):
                        for other in answers { other.job.cancel() }
                        throw Self.apiError(error, errorText)
                    case .finished(let finished):
                        summary = finished
                    }
                }
            }
            var content: String? = text
            var calls: [ToolCall] = []
            if parseTools {
                (content, calls) = ToolCallSyntax.parse(
                    text, parallel: parallelToolCalls, makeID: { Self.newID("call_") })
            }
            choices.append(
                ResponseBodies.Choice(
                    index: answer.index, content: content, calls: calls,
                    logprobs: answer.job.request.logprobs == nil ? nil : logprobs,
                    finishReason: Self.finishReason(summary!, calls: calls)))
            summaries.append(summary!)
        }
        let usage = Answer.usage(answers, summaries)
        channel.logNote = Self.logNote(usage)
        try channel.sendJSON(JSONBody(value: bodies.answer(choices, usage: usage)))
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

/// One choice of a request: its index among the choices, its job, and the text it starts
/// with before what is generated.
struct Answer {
    var index: Int
    /// Which of the request's prompts it answers.
    var prompt: Int
    var job: GenerationJob
    var start: String

    /// The request's usage: each prompt counted once (its first answer's figures), every
    /// answer's completion.
    static func usage(_ answers: [Answer], _ summaries: [GenerationSummary]) -> GenerationSummary {
        var total = GenerationSummary(
            promptTokens: 0, cachedTokens: 0, completionTokens: 0,
            finishReason: summaries.last?.finishReason ?? .stop)
        var counted = Set<Int>()
        for (answer, summary) in zip(answers, summaries) {
            total.completionTokens += summary.completionTokens
            total.draftedTokens += summary.draftedTokens
            total.acceptedDraftTokens += summary.acceptedDraftTokens
            if counted.insert(answer.prompt).inserted {
                total.promptTokens += summary.promptTokens
                total.cachedTokens += summary.cachedTokens
            }
        }
        return total
    }
}

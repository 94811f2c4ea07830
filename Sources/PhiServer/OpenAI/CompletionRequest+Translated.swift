import PhiFormats

extension CompletionRequest {
    /// A chat request translated from another API (Responses, Anthropic Messages) into the
    /// one request model the scheduler serves: `messages` in chat-completions form (roles,
    /// text content, `tool_calls`, `tool` results), `tools` as `{"type": "function",
    /// "function": {…}}`. Sampling the other APIs do not offer stays at its neutral value.
    init(
        translatedChat messages: [JSONValue], tools: [JSONValue], toolChoice: ToolChoice,
        parallelToolCalls: Bool, model: String?, stream: Bool, maxTokens: Int?,
        temperature: Double, topP: Double, topK: Int = 0, stop: [String]
    ) {
        endpoint = .chat
        input = .chat(messages: messages, tools: toolChoice == .none ? [] : tools)
        self.toolChoice = toolChoice
        self.parallelToolCalls = parallelToolCalls
        self.model = model
        self.stream = stream
        includeUsage = false
        self.maxTokens = maxTokens
        self.temperature = temperature
        self.topP = topP
        self.topK = topK
        minP = 0
        repetitionPenalty = nil
        seed = nil
        self.stop = stop.filter { !$0.isEmpty }
        logprobs = nil
    }
}

extension CompletionRequest {
    /// The model is offered tools, so its answer is parsed for calls.
    var offersTools: Bool {
        if case .chat(_, let tools) = input { !tools.isEmpty } else { false }
    }
}

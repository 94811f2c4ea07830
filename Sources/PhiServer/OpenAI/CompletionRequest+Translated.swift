import PhiFormats

extension CompletionRequest {
    /// A chat request translated from another API (Responses, Anthropic Messages) into the
    /// one request model the scheduler serves: `messages` in chat-completions form (roles,
    /// text content, `tool_calls`, `tool` results), `tools` as `{"type": "function",
    /// "function": {…}}`. Sampling the other APIs do not offer takes the model's defaults.
    init(
        translatedChat messages: [JSONValue], tools: [JSONValue], toolChoice: ToolChoice,
        parallelToolCalls: Bool, model: String?, stream: Bool, maxTokens: Int?,
        temperature: Double, topP: Double, topK: Int = 0, stop: [String]
    ) {
        endpoint = .chat
        inputs = [.chat(messages: messages, tools: toolChoice == .none ? [] : tools)]
        self.toolChoice = toolChoice
        self.parallelToolCalls = parallelToolCalls
        self.model = model
        adapter = nil
        self.stream = stream
        includeUsage = false
        self.maxTokens = maxTokens
        // The other APIs always have a temperature and top_p (their documented defaults when
        // the request leaves them out); the rest of the sampling stays at the model's defaults.
        settings[.temperature] = .number(temperature)
        settings[.topP] = .number(topP)
        if topK > 0 { settings[.topK] = .integer(topK) }
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

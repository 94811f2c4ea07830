import Foundation
import PhiEngine
import PhiFormats
import Testing

@testable import PhiServer

/// The Responses and Messages event streams, driven by a job whose events the test posts
/// (no model, no scheduler): the order of events for text and tool calls, a failure in the
/// middle of an answer in each API's shape, and the keep-alive each API writes while waiting.
@Suite("Responses and Messages event streams")
struct AgentStreamTests {
    typealias Recording = AnswerStreamTests.Recording

    static func job(_ events: [GenerationEvent]) -> GenerationJob {
        let job = GenerationJob(
            GenerationRequest(
                prompt: [1, 2, 3], parameters: .greedy(maxTokens: 50), stopTokens: StopTokens(),
                stopStrings: [], logprobs: nil))
        for event in events { job.post(event) }
        return job
    }

    static func answer(_ job: GenerationJob, _ channel: Recording, tools: Bool) -> PendingAnswer {
        PendingAnswer(
            job: job, channel: channel, parseTools: tools, keepAlive: .milliseconds(20),
            errorText: ErrorText(modelDirectory: "/models/tiny", modelID: "tiny"))
    }

    static func summary(_ reason: FinishReason, completion: Int = 7) -> GenerationSummary {
        GenerationSummary(promptTokens: 3, cachedTokens: 2, completionTokens: completion, finishReason: reason)
    }

    /// The stream's events as (name, data) pairs.
    static func events(_ body: String) throws -> [(name: String, data: JSONValue)] {
        try body.components(separatedBy: "\n\n").filter { $0.hasPrefix("event: ") }.map { block in
            let lines = block.split(separator: "\n", maxSplits: 1)
            return (String(lines[0].dropFirst(7)), try JSONValue(parsing: Array(lines[1].dropFirst(6).utf8)))
        }
    }

    static let toolAnswer: [GenerationEvent] = [
        .text("Let me ", []), .text("check.<|tool_", []),
        .text(#"call|>{"name":"get_weather","arguments":{"city": "Paris"}}<|/tool_call|>"#, []),
        .finished(summary(.stop)),
    ]

    static func responses(_ job: GenerationJob, _ channel: Recording, tools: Bool = true) throws
        -> ResponsesStream
    {
        let request = try ResponsesRequest(
            body: Array(#"{"input": "x", "tools": [{"type": "function", "name": "get_weather"}]}"#.utf8),
            contextSize: 64)
        let object = ResponseObject(
            id: "resp_1", createdAt: 0, model: "m", echo: request.echo, tools: request.tools)
        return ResponsesStream(answer: Self.answer(job, channel, tools: tools), object: object)
    }

    @Test("responses: text deltas, then the call as a function_call item, then completed with usage")
    func responsesToolCall() throws {
        let channel = Recording()
        try Self.responses(Self.job(Self.toolAnswer), channel).run()
        let events = try Self.events(channel.body)
        #expect(
            events.map(\.name) == [
                "response.created", "response.in_progress", "response.output_item.added",
                "response.content_part.added", "response.output_text.delta",
                "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done",
                "response.output_item.added", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done",
                "response.completed",
            ])
        #expect(events.map { $0.data["sequence_number"]?.intValue } == Array(0..<14))
        #expect(events[6].data["text"]?.stringValue == "Let me check.")
        let call = events[12].data["item"]
        #expect(call?["type"]?.stringValue == "function_call" && call?["name"]?.stringValue == "get_weather")
        #expect(call?["arguments"]?.stringValue == #"{"city":"Paris"}"#)
        #expect(events[9].data["output_index"]?.intValue == 1)
        let response = events[13].data["response"]
        #expect(response?["status"]?.stringValue == "completed")
        #expect(response?["output"]?.arrayValue?.count == 2)
        #expect(response?["usage"]?["input_tokens_details"]?["cached_tokens"]?.intValue == 2)
    }

    @Test("responses: a failure mid-answer ends the stream with response.failed; length is incomplete")
    func responsesEndings() throws {
        let failed = Recording()
        try Self.responses(
            Self.job([.text("Hi", []), .failed(SchedulerFailure(CancellationError()))]), failed, tools: false
        ).run()
        let events = try Self.events(failed.body)
        #expect(events.last?.name == "response.failed")
        #expect(events.last?.data["response"]?["status"]?.stringValue == "failed")
        #expect(events.last?.data["response"]?["error"]?["message"]?.stringValue?.isEmpty == false)

        let cut = Recording()
        try Self.responses(Self.job([.text("Hi", []), .finished(Self.summary(.length))]), cut, tools: false)
            .run()
        let last = try Self.events(cut.body).last
        #expect(last?.name == "response.incomplete")
        #expect(last?.data["response"]?["incomplete_details"]?["reason"]?.stringValue == "max_output_tokens")
    }

    static func messages(_ job: GenerationJob, _ channel: Recording, tools: Bool = true) -> MessagesStream {
        MessagesStream(
            answer: Self.answer(job, channel, tools: tools), bodies: MessageBodies(id: "msg_1", model: "m"))
    }

    @Test("messages: a text block, a tool_use block with its input as JSON, stop_reason tool_use")
    func messagesToolCall() throws {
        let channel = Recording()
        Self.messages(Self.job(Self.toolAnswer), channel).run()
        let events = try Self.events(channel.body)
        #expect(
            events.map(\.name) == [
                "message_start", "ping", "content_block_start", "content_block_delta",
                "content_block_delta", "content_block_stop", "content_block_start",
                "content_block_delta", "content_block_stop", "message_delta", "message_stop",
            ])
        #expect(events.allSatisfy { $0.data["type"]?.stringValue == $0.name })
        #expect(events[0].data["message"]?["usage"]?["input_tokens"]?.intValue == 3)
        #expect(events[6].data["index"]?.intValue == 1)
        #expect(events[6].data["content_block"]?["type"]?.stringValue == "tool_use")
        #expect(events[7].data["delta"]?["partial_json"]?.stringValue == #"{"city":"Paris"}"#)
        #expect(events[9].data["delta"]?["stop_reason"]?.stringValue == "tool_use")
        let usage = events[9].data["usage"]
        #expect(usage?["input_tokens"]?.intValue == 1 && usage?["cache_read_input_tokens"]?.intValue == 2)
        #expect(usage?["output_tokens"]?.intValue == 7)
    }

    @Test("messages: an error event in Anthropic's shape; ping events while nothing is generated")
    func messagesErrorAndPing() throws {
        let failed = Recording()
        Self.messages(Self.job([.failed(SchedulerRefusal.stopping)]), failed, tools: false).run()
        let last = try Self.events(failed.body).last
        #expect(last?.name == "error")
        #expect(last?.data["error"]?["type"]?.stringValue == "overloaded_error")

        // Nothing posted yet: pings go out until the answer comes.
        let job = Self.job([])
        let waiting = Recording()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) {
            job.post(.text("Hi", []))
            job.post(.finished(Self.summary(.stop, completion: 1)))
        }
        Self.messages(job, waiting, tools: false).run()
        let names = try Self.events(waiting.body).map(\.name)
        #expect(names.prefix(3) == ["message_start", "ping", "ping"])
        #expect(names.suffix(5) == ["content_block_start", "content_block_delta", "content_block_stop", "message_delta", "message_stop"])
    }
}

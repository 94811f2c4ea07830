import Foundation
import PhiFormats
import PhiKit
import TestSupport
import Testing

@testable import PhiServer

/// The completion handler on stories-260k, written to a recording channel instead of a
/// socket: keep-alive comments while a streamed request waits, and `echo`.
@Suite("answers: keep-alive and echo")
struct AnswerStreamTests {
    /// Keeps what the handler writes; `onWrite` sees every streamed write.
    final class Recording: ResponseChannel, @unchecked Sendable {
        private let lock = NSLock()
        private var storedBody: [UInt8] = []
        private(set) var status = 0
        var onWrite: @Sendable ([UInt8]) -> Void = { _ in }
        var logNote = ""
        var isPeerGone: Bool { false }

        var body: String { lock.withLock { String(decoding: storedBody, as: UTF8.self) } }

        func send(status: Int, headers: [(String, String)], body: [UInt8]) throws {
            lock.withLock {
                self.status = status
                storedBody = body
            }
        }
        func startStream(status: Int, headers: [(String, String)]) throws {
            lock.withLock { self.status = status }
        }
        func write(_ bytes: [UInt8]) throws {
            lock.withLock { storedBody += bytes }
            onWrite(bytes)
        }
        func finish() throws {}
    }

    static func handler(_ scheduler: Scheduler, container: ModelContainer) -> CompletionHandler {
        CompletionHandler(
            container: container, scheduler: scheduler, modelID: "stories-260k",
            modelNames: ["stories-260k"], keepAlive: .milliseconds(20))
    }

    static func scheduler(_ container: ModelContainer) -> Scheduler {
        Scheduler(
            container: container,
            configuration: .init(parallel: 1, queueCapacity: 4, contextSize: 256, cacheBytes: 1 << 20))
    }

    @Test("a streamed request waiting for a slot gets ': keep-alive' comments, then its answer")
    func keepAliveWhileQueued() throws {
        let container = try #require(SchedulerTests.container)
        // Not started yet: the request waits in the queue until two comments went out.
        let scheduler = Self.scheduler(container)
        final class Once: @unchecked Sendable {
            let lock = NSLock()
            var comments = 0
            var started = false
            let scheduler: Scheduler
            init(_ scheduler: Scheduler) { self.scheduler = scheduler }
            func start(afterComment: Bool) {
                let go = lock.withLock {
                    if afterComment { comments += 1 }
                    guard !started, !afterComment || comments == 2 else { return false }
                    started = true
                    return true
                }
                if go { scheduler.start() }
            }
        }
        let once = Once(scheduler)
        // Should no comment come, the scheduler starts anyway and the test fails, not hangs.
        DispatchQueue.global().asyncAfter(deadline: .now() + 10) { once.start(afterComment: false) }
        defer {
            once.start(afterComment: false)
            scheduler.shutdown()
        }
        let channel = Recording()
        channel.onWrite = { bytes in
            if bytes == Array(": keep-alive\n\n".utf8) { once.start(afterComment: true) }
        }
        Self.handler(scheduler, container: container).handle(
            .completions,
            body: Array(#"{"prompt": "Once upon a time", "max_tokens": 8, "temperature": 0, "stream": true}"#.utf8),
            channel: channel)
        let body = channel.body
        #expect(channel.status == 200)
        // two comments while queued; more may follow while the first token is computed (a
        // comment goes out every 20 ms of silence, and a loaded machine takes longer)
        let comment = ": keep-alive\n\n"
        var rest = Substring(body)
        var comments = 0
        while rest.hasPrefix(comment) {
            rest = rest.dropFirst(comment.count)
            comments += 1
        }
        #expect(comments >= 2 && rest.hasPrefix("data: {"), "\(body.prefix(200))")
        #expect(body.hasSuffix("data: [DONE]\n\n"))
    }

    /// The answer's text (the JSON body's, or the streamed chunks' joined), and the body.
    static func answer(_ handler: CompletionHandler, _ json: String) throws -> (String, JSONValue?) {
        let channel = Recording()
        handler.handle(.completions, body: Array(json.utf8), channel: channel)
        #expect(channel.status == 200, "\(channel.body)")
        if !json.contains(#""stream": true"#) {
            let answer = try JSONValue(parsing: Array(channel.body.utf8))
            return (answer["choices"]?.arrayValue?.first?["text"]?.stringValue ?? "", answer)
        }
        let text = try channel.body.components(separatedBy: "\n\n")
            .filter { $0.hasPrefix("data: {") }
            .map { try JSONValue(parsing: Array($0.dropFirst(6).utf8)) }
            .compactMap { $0["choices"]?.arrayValue?.first?["text"]?.stringValue }.joined()
        return (text, nil)
    }

    @Test("echo: the answer starts with the prompt, streamed and not")
    func echo() throws {
        let container = try #require(SchedulerTests.container)
        let scheduler = Self.scheduler(container)
        scheduler.start()
        defer { scheduler.shutdown() }
        let handler = Self.handler(scheduler, container: container)
        func text(_ json: String) throws -> String { try Self.answer(handler, json).0 }
        let prompt = #""prompt": "Once upon a time", "max_tokens": 8, "temperature": 0"#
        let plain = try text("{\(prompt)}")
        #expect(!plain.isEmpty)
        #expect(try text(#"{\#(prompt), "echo": true}"#) == "Once upon a time" + plain)
        #expect(try text(#"{\#(prompt), "echo": true, "stream": true}"#) == "Once upon a time" + plain)
    }

    /// Issue 27: "Once" + "▁upon" came back as "Onceupon": the answer was decoded as a text of
    /// its own, whose leading space the decoder strips.
    @Test("echo keeps the space between the prompt and the answer")
    func echoKeepsTheSpace() throws {
        let container = try #require(SchedulerTests.container)
        let scheduler = Self.scheduler(container)
        scheduler.start()
        defer { scheduler.shutdown() }
        let handler = Self.handler(scheduler, container: container)
        let prompt = #""prompt": "Once", "max_tokens": 6, "temperature": 0"#
        // The answer's tokens as they read inside a text (log-probabilities decode each one
        // after an anchor): what must follow "Once".
        let (_, body) = try Self.answer(handler, #"{\#(prompt), "logprobs": 0}"#)
        let tokens = try #require(
            body?["choices"]?.arrayValue?.first?["logprobs"]?["tokens"]?.arrayValue)
        let continuation = tokens.compactMap(\.stringValue).joined()
        #expect(continuation.hasPrefix(" "), "the case needs an answer that starts a word")
        for stream in ["", #", "stream": true"#] {
            let echoed = try Self.answer(handler, #"{\#(prompt), "echo": true\#(stream)}"#).0
            #expect(echoed == "Once" + continuation)
        }
    }
}

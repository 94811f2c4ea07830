import Foundation
import Synchronization
import Testing

@testable import PhiServer

/// What the test responder saw, for tests to check after the fact.
final class ResponderLog: Sendable {
    private let state = Mutex<(bodies: [[UInt8]], peerGone: Bool, streamErrors: [HTTPWriteError])>(([], false, []))

    func recordBody(_ body: [UInt8]) { state.withLock { $0.bodies.append(body) } }
    func recordPeerGone() { state.withLock { $0.peerGone = true } }
    func recordStreamError(_ error: HTTPWriteError) { state.withLock { $0.streamErrors.append(error) } }

    var bodies: [[UInt8]] { state.withLock { $0.bodies } }
    var sawPeerGone: Bool { state.withLock { $0.peerGone } }
}

/// A tiny responder with one route per behaviour under test.
struct TestResponder: HTTPResponder {
    let log = ResponderLog()

    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        let text = [("Content-Type", "text/plain")]
        do {
            switch request.path {
            case "/hello", "/v1/models", "/health":
                try writer.send(status: 200, headers: text, body: Array("hello".utf8))
            case "/echo":
                log.recordBody(request.body)
                try writer.send(status: 200, headers: text, body: request.body)
            case "/query":
                try writer.send(status: 200, headers: text, body: Array((request.query ?? "<nil>").utf8))
            case "/stream":
                let count = Int(request.query ?? "3") ?? 3
                try writer.startStream(status: 200, headers: [("Content-Type", "text/event-stream")])
                for i in 0..<count { try writer.write(Array("data: \(i)\n\n".utf8)) }
                try writer.finish()
                writer.logNote = "tokens=\(count)"
            case "/endless":
                // Streams until the client goes, as a generation loop does between tokens.
                try writer.startStream(status: 200, headers: text)
                for _ in 0..<2000 {
                    if writer.isPeerGone {
                        log.recordPeerGone()
                        return
                    }
                    try writer.write(Array("token ".utf8))
                    Thread.sleep(forTimeInterval: 0.005)
                }
                try writer.finish()
            case "/slow":
                Thread.sleep(forTimeInterval: 0.3)
                try writer.send(status: 200, headers: text, body: Array("done".utf8))
            case "/nothing":
                return
            default:
                try writer.send(status: 404, headers: text, body: Array("no route".utf8))
            }
        } catch {
            log.recordStreamError(error)
            // A write can meet the close just before isPeerGone would have seen it.
            if error == .peerGone && writer.isPeerGone { log.recordPeerGone() }
        }
    }
}

/// Collects the server's log lines.
final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

/// A running server on 127.0.0.1 with a free port, stopped when `body` returns.
func withServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    responder: TestResponder = TestResponder(),
    _ body: (HTTPServer, TestResponder, LogLines) throws -> Void
) throws {
    let logLines = LogLines()
    var configuration = HTTPServerConfiguration(host: "127.0.0.1", port: 0)
    configuration.log = { logLines.append($0) }
    configure(&configuration)
    let server = try HTTPServer(configuration: configuration, responder: responder)
    let finished = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        try? server.run()
        finished.signal()
    }
    defer {
        server.stop()
        #expect(finished.wait(timeout: .now() + 10) == .success, "run() did not return after stop()")
    }
    try body(server, responder, logLines)
}

/// Polls `condition` for up to `seconds`.
func eventually(_ seconds: Double = 2, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
        if condition() { return true }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return condition()
}

func get(_ path: String, _ extra: String = "") -> String {
    "GET \(path) HTTP/1.1\r\nHost: test\r\n\(extra)\r\n"
}

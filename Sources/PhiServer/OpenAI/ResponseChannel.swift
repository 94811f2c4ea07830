/// Where an answer goes: the HTTP layer's `HTTPResponseWriter`, or a recording in the tests.
/// The OpenAI layer writes through this so it can be exercised without sockets.
protocol ResponseChannel: AnyObject, Sendable {
    func send(status: Int, headers: [(String, String)], body: [UInt8]) throws
    func startStream(status: Int, headers: [(String, String)]) throws
    func write(_ bytes: [UInt8]) throws
    func finish() throws
    var isPeerGone: Bool { get }
    var logNote: String { get set }
}

extension HTTPResponseWriter: ResponseChannel {}

extension ResponseChannel {
    func sendJSON(status: Int = 200, _ body: JSONBody, headers: [(String, String)] = []) throws {
        try send(
            status: status, headers: [("Content-Type", "application/json")] + headers,
            body: Array(body.value.serialized().utf8))
    }
}

/// A JSON value about to be sent (wrapped so call sites read as responses).
struct JSONBody {
    var value: JSONValue
}

import PhiFormats

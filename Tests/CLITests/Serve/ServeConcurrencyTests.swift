import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Several clients at once: every answer equals a lone `phikit run`; a client that hangs up
/// frees its slot; a full queue answers 503; SIGTERM ends the server with exit 0.
@Suite("phikit serve: concurrency")
struct ServeConcurrencyTests {
    static let prompts = [
        "Once upon a time", "The cat", "Lily and Tom", "One day", "The sun was", "A big dog",
        "Sam had a", "There was a",
    ]

    @Test("8 clients at once, greedy and seeded: each answer equals phikit run alone")
    func eightClients() throws {
        let server = try ServeProcess("stories-260k", ["--parallel", "4"])
        let results = Results()
        DispatchQueue.concurrentPerform(iterations: 8) { i in
            var json: [String: Any] = ["prompt": Self.prompts[i], "max_tokens": 60]
            // Even clients greedy, odd ones sampled with their own seed.
            if i % 2 == 0 {
                json["temperature"] = 0
            } else {
                json["temperature"] = 0.9
                json["seed"] = 100 + i
            }
            let answer = try? server.post("/v1/completions", json)
            let text = ((answer?.body["choices"] as? [[String: Any]])?.first?["text"] as? String)
            results.set(i, text)
        }
        for i in 0..<8 {
            let extra = i % 2 == 0 ? [] : ["--temp", "0.9", "--seed", "\(100 + i)"]
            let lone = try ServeCompletionsTests.lone(Self.prompts[i], 60, extra)
            #expect(results.get(i) == lone, "client \(i)")
        }
    }

    @Test(
        "a client that hangs up stops its generation within a token; a full queue answers 503")
    func hangUpAndQueueFull() throws {
        let model = try TinyChatModel.slowDirectory()
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path, ["--parallel", "1", "--max-queue", "0"])
        let fd = try TestHTTP.connect(port: server.port)
        try TestHTTP.send(
            fd, "POST", "/v1/completions",
            body: #"{"prompt": "Hello", "max_tokens": 2000, "temperature": 0, "stream": true}"#,
            headers: [])
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while String(decoding: received, as: UTF8.self).components(separatedBy: "data: ").count < 3 {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        // The only slot is busy and nothing may wait: refused at once.
        let refused = try server.request(
            "POST", "/v1/completions", json: #"{"prompt": "x", "max_tokens": 1}"#)
        #expect(refused.status == 503)
        #expect(refused.headers["retry-after"] == "1")
        #expect((try refused.object()["error"] as? [String: Any])?["code"] as? String == "queue_full")
        // Count every chunk the server had sent by the moment of the hang-up, not only those
        // read before the refused request: generation goes on meanwhile (longer on a loaded
        // machine), and the bound below is about what follows the close.
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        let seen = String(decoding: received, as: UTF8.self).components(separatedBy: "data: ").count - 1
        close(fd)
        let log = server.waitForLog(count: 2, timeout: 30)
        let line = try #require(log.first { $0.contains("finish=cancelled") }, "\(log)")
        let generated = Int(line.split(separator: "+").last?.prefix { $0.isNumber } ?? "") ?? -1
        // Tokens sent before the hang-up, plus at most the one being computed and the one
        // before the scheduler's next check.
        #expect(generated >= 1 && generated <= seen + 3, "\(line), \(seen) chunks seen")
        let (status, _) = try server.post(
            "/v1/completions", ["prompt": "Hello", "max_tokens": 2, "temperature": 0])
        #expect(status == 200)
    }

    @Test("while the only slot is busy: 503 in each API's shape, /ready busy, /health alive, refusals counted")
    func busy() throws {
        let model = try TinyChatModel.slowDirectory()
        defer { try? FileManager.default.removeItem(at: model) }
        let server = try ServeProcess(model.path, ["--parallel", "1", "--max-queue", "0"])
        #expect(try server.request("GET", "/ready").status == 200)
        let fd = try TestHTTP.connect(port: server.port)
        defer { close(fd) }
        try TestHTTP.send(
            fd, "POST", "/v1/completions",
            body: #"{"prompt": "Hello", "max_tokens": 2000, "stream": true}"#, headers: [])
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains("data: ") {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { break }
            received += buffer[0..<n]
        }
        let refused = try server.request(
            "POST", "/v1/responses", json: #"{"input": "x", "max_output_tokens": 1}"#)
        #expect(refused.status == 503 && refused.headers["retry-after"] == "1")
        #expect((try refused.object()["error"] as? [String: Any])?["code"] as? String == "queue_full")
        let overloaded = try server.request(
            "POST", "/v1/messages",
            json: #"{"model": "\#(model.lastPathComponent)", "max_tokens": 1, "messages": [{"role": "user", "content": "x"}]}"#)
        #expect(overloaded.status == 503 && overloaded.headers["retry-after"] == "1")
        #expect((try overloaded.object()["error"] as? [String: Any])?["type"] as? String == "overloaded_error")
        #expect(try server.request("GET", "/health").status == 200)
        let ready = try server.request("GET", "/ready")
        #expect(ready.status == 503 && ready.headers["retry-after"] == "1")
        let metrics = try server.request("GET", "/metrics").body
        #expect(metrics.contains("phikit_requests_refused_total 2\n"))
        #expect(metrics.contains("llamacpp:requests_processing 1\n"))
    }

    @Test("SIGTERM and SIGINT stop the server with exit 0", arguments: [SIGTERM, SIGINT])
    func stops(_ signal: Int32) throws {
        let server = try ServeProcess("stories-260k")
        #expect(try server.request("GET", "/health").status == 200)
        #expect(server.stop(signal: signal) == 0)
    }

    final class Results: @unchecked Sendable {
        private let lock = NSLock()
        private var texts: [Int: String] = [:]
        func set(_ i: Int, _ text: String?) { lock.withLock { texts[i] = text } }
        func get(_ i: Int) -> String? { lock.withLock { texts[i] } }
    }
}

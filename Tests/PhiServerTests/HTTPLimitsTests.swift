import Foundation
import Testing

@testable import PhiServer

/// Limits, timeouts, malformed input, the connection cap and stopping, against a real server.
@Suite("HTTP limits")
struct HTTPLimitsTests {
    @Test("a header block over 16 KB gets 431 and the connection closes")
    func headerTooLarge() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(get("/hello", "X-Big: \(String(repeating: "a", count: 17_000))\r\n"))
            #expect(try client.readResponse().status == 431)
            #expect(try client.isClosedByServer())
        }
    }

    @Test("a body over the limit gets 413 before it is read")
    func bodyTooLarge() throws {
        try withServer({ $0.maxBodyBytes = 1024 }) { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2048\r\n\r\n")
            try client.send([UInt8](repeating: 0x61, count: 2048))
            let response = try client.readResponse()
            #expect(response.status == 413)
            #expect(response.text.contains("larger than 1024 bytes"))
            #expect(try client.isClosedByServer())
        }
    }

    @Test(
        "malformed requests get 400 and a close",
        arguments: [
            "GARBAGE\r\n\r\n",
            "GET /hello\r\n\r\n",
            "GET  /hello HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET hello HTTP/1.1\r\nHost: t\r\n\r\n",
            "GET /hello HTTP/1.1\r\n\r\n",  // no Host
            "GET /hello HTTP/1.1\r\nHost: t\r\nBad Header: x\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: t\r\n folded\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: -1\r\n\r\n",
            "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "\u{16}\u{03}\u{01}\u{02}\u{00}\r\n\r\n",  // a TLS hello
        ])
    func badRequest(_ raw: String) throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(raw)
            let response = try client.readResponse()
            #expect(response.status == 400)
            #expect(response.text.contains("\"type\":\"invalid_request_error\""))
            #expect(try client.isClosedByServer())
        }
    }

    @Test("methods: unknown 501, TRACE 405, chunked body 411, HTTP/2.0 505")
    func refusedMethods() throws {
        try withServer { server, _, _ in
            let unknown = try RawClient(port: server.port)
            try unknown.send("BREW /pot HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try unknown.readResponse().status == 501)
            try unknown.send("TRACE / HTTP/1.1\r\nHost: t\r\n\r\n")
            let trace = try unknown.readResponse()
            #expect(trace.status == 405 && trace["allow"] != nil)

            let chunked = try RawClient(port: server.port)
            try chunked.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
            #expect(try chunked.readResponse().status == 411)

            let future = try RawClient(port: server.port)
            try future.send("GET / HTTP/2.0\r\nHost: t\r\n\r\n")
            #expect(try future.readResponse().status == 505)
        }
    }

    @Test("a slow client gets 408; an idle connection is closed quietly")
    func timeouts() throws {
        try withServer({
            $0.requestTimeout = .milliseconds(300)
            $0.idleTimeout = .milliseconds(300)
        }) { server, _, _ in
            let slow = try RawClient(port: server.port)
            try slow.send("GET /hello HTTP/1.1\r\nHo")
            #expect(try slow.readResponse().status == 408)
            #expect(try slow.isClosedByServer())

            let slowBody = try RawClient(port: server.port)
            try slowBody.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\nabc")
            #expect(try slowBody.readResponse().status == 408)

            let idle = try RawClient(port: server.port)
            try idle.send(get("/hello"))
            #expect(try idle.readResponse().status == 200)
            let start = Date()
            #expect(try idle.isClosedByServer())
            #expect(Date().timeIntervalSince(start) < 3)
        }
    }

    @Test("connections over the cap get 503")
    func connectionCap() throws {
        try withServer({ $0.maxConnections = 2 }) { server, _, _ in
            let first = try RawClient(port: server.port)
            let second = try RawClient(port: server.port)
            for client in [first, second] {
                try client.send(get("/hello"))
                #expect(try client.readResponse().status == 200)
            }
            let third = try RawClient(port: server.port)
            try third.send(get("/hello"))
            let refused = try third.readResponse()
            #expect(refused.status == 503)
            #expect(refused["retry-after"] == "1")
            // A slot frees when a client leaves.
            first.close()
            #expect(eventually { server.openConnections == 1 })
            let fourth = try RawClient(port: server.port)
            try fourth.send(get("/hello"))
            #expect(try fourth.readResponse().status == 200)
        }
    }

    @Test("stop() lets the in-flight request finish, closes idle connections, run() returns")
    func gracefulStop() throws {
        var stoppedPort = 0
        try withServer { server, _, _ in
            stoppedPort = server.port
            let idle = try RawClient(port: server.port)
            try idle.send(get("/hello"))
            _ = try idle.readResponse()

            let busy = try RawClient(port: server.port)
            try busy.send(get("/slow"))
            Thread.sleep(forTimeInterval: 0.1)  // the responder is sleeping now
            server.stop()
            let answer = try busy.readResponse()
            #expect(answer.status == 200 && answer.text == "done")
            #expect(answer["connection"] == "close")
            #expect(try idle.isClosedByServer())
        }
        // withServer checked that run() returned; the port no longer accepts.
        #expect(throws: ClientError.self) { try RawClient(port: stoppedPort) }
    }
}

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

    @Test("only when every connection is being answered does one more get 503; /health still answers")
    func connectionCap() throws {
        try withServer({
            $0.maxConnections = 2
            $0.maxConnectionsPerClient = 2
        }) { server, _, _ in
            // Two answers in progress: nothing can be closed to make room.
            let streams = try (0..<2).map { _ in try RawClient(port: server.port) }
            for client in streams {
                try client.send(get("/endless"))
                #expect(try client.readHead().status == 200)
            }
            let refused = try RawClient(port: server.port)
            try refused.send(get("/hello"))
            let answer = try refused.readResponse()
            #expect(answer.status == 503)
            #expect(answer["retry-after"] == "1")
            let monitor = try RawClient(port: server.port)
            try monitor.send(get("/health"))
            #expect(try monitor.readResponse().status == 200)
            // A place frees when a client leaves.
            streams[0].close()
            #expect(eventually(5) { server.openConnections == 1 })
            let next = try RawClient(port: server.port)
            try next.send(get("/hello"))
            #expect(try next.readResponse().status == 200)
        }
    }

    /// Issue 27: 64 connections that sent nothing took every place, and real requests got
    /// 503 for as long as they were reopened.
    @Test("silent connections make room for real requests, the longest idle first")
    func idleConnectionsMakeRoom() throws {
        try withServer { server, _, log in
            let silent = try (0..<64).map { _ in try RawClient(port: server.port) }
            // One client address holds at most half of the 64 places.
            #expect(eventually(5) { server.openConnections == 32 })
            for _ in 0..<5 {
                let client = try RawClient(port: server.port)
                try client.send(get("/hello"))
                #expect(try client.readResponse().status == 200)
            }
            #expect(try silent[0].isClosedByServer())
            #expect(server.openConnections <= 33)
            #expect(log.all.contains { $0.contains("closed: idle while the server was full") })
        }
        try withServer({
            $0.maxConnections = 3
            $0.maxConnectionsPerClient = 3
        }) { server, _, _ in
            let first = try RawClient(port: server.port)
            try first.send(get("/hello"))
            _ = try first.readResponse()  // kept alive, idle since
            Thread.sleep(forTimeInterval: 0.05)
            // Sending its request byte by byte: slow, but newer than the idle one.
            let slow = try RawClient(port: server.port)
            try slow.send("GET /hel")
            let quiet = try RawClient(port: server.port)
            #expect(eventually { server.openConnections == 3 })
            let real = try RawClient(port: server.port)
            try real.send(get("/hello"))
            #expect(try real.readResponse().status == 200)
            #expect(try first.isClosedByServer())  // idle the longest
            try quiet.send(get("/hello"))
            #expect(try quiet.readResponse().status == 200)
            _ = slow
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

import Foundation
import Testing

@testable import PhiServer

/// Keep-alive, pipelining, Expect: 100-continue and framing against a real server.
@Suite("HTTP connection")
struct HTTPConnectionTests {
    @Test("two requests on one kept-alive connection")
    func keepAlive() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(get("/hello"))
            let first = try client.readResponse()
            #expect(first.status == 200 && first.text == "hello")
            #expect(first["connection"] == nil)
            try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nping")
            let second = try client.readResponse()
            #expect(second.status == 200 && second.text == "ping")
            try client.send(get("/hello", "Connection: close\r\n"))
            let third = try client.readResponse()
            #expect(third["connection"] == "close")
            #expect(try client.isClosedByServer())
        }
    }

    @Test("pipelined requests are answered in order")
    func pipelining() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(
                "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\none"
                    + get("/query?x=1")
                    + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nthree")
            #expect(try client.readResponse().text == "one")
            #expect(try client.readResponse().text == "x=1")
            #expect(try client.readResponse().text == "three")
        }
    }

    @Test("a request arriving byte by byte")
    func trickle() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            for byte in "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nok".utf8 {
                try client.send([byte])
            }
            #expect(try client.readResponse().text == "ok")
        }
    }

    @Test("Expect: 100-continue gets 100 before the body, 413 instead when too large")
    func expectContinue() throws {
        try withServer({ $0.maxBodyBytes = 1000 }) { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            let interim = try client.readHead()
            #expect(interim.status == 100)
            try client.send("hello")
            #expect(try client.readResponse().text == "hello")

            let large = try RawClient(port: server.port)
            try large.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n")
            #expect(try large.readResponse().status == 413)
            #expect(try large.isClosedByServer())
        }
    }

    @Test("HTTP/1.0: close by default, keep-alive on request, close-delimited streams")
    func http10() throws {
        try withServer { server, _, _ in
            let plain = try RawClient(port: server.port)
            try plain.send("GET /hello HTTP/1.0\r\n\r\n")
            #expect(try plain.readResponse().text == "hello")
            #expect(try plain.isClosedByServer())

            let kept = try RawClient(port: server.port)
            try kept.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let first = try kept.readResponse()
            #expect(first["connection"] == "keep-alive")
            try kept.send("GET /stream?2 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
            let stream = try kept.readResponse()
            #expect(stream["transfer-encoding"] == nil && stream["content-length"] == nil)
            #expect(stream["connection"] == "close")
            #expect(stream.text == "data: 0\n\ndata: 1\n\n")  // read until the server closed
        }
    }

    @Test("chunked streaming decodes to the written pieces")
    func chunkedStream() throws {
        try withServer { server, _, logLines in
            let client = try RawClient(port: server.port)
            try client.send(get("/stream?4"))
            let response = try client.readResponse()
            #expect(response["transfer-encoding"] == "chunked")
            #expect(response.text == (0..<4).map { "data: \($0)\n\n" }.joined())
            #expect(response.chunks == [9, 9, 9, 9, 0])
            // Still usable afterwards.
            try client.send(get("/hello"))
            #expect(try client.readResponse().text == "hello")
            #expect(eventually { logLines.all.contains { $0.contains("\"GET /stream\" 200 36B") && $0.hasSuffix("tokens=4") } })
        }
    }

    @Test("HEAD gets the head only")
    func head() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let response = try client.readResponse(toHEAD: true)
            #expect(response["content-length"] == "5")
            try client.send(get("/hello"))
            #expect(try client.readResponse().text == "hello")  // no stray body in between
        }
    }

    @Test("a responder that sends nothing yields 500")
    func noResponse() throws {
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(get("/nothing"))
            #expect(try client.readResponse().status == 500)
        }
    }

    @Test("curl reads a streamed response")
    func curlStream() throws {
        try withServer { server, _, _ in
            let curl = Process()
            curl.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
            curl.arguments = ["-sS", "-N", "--max-time", "5", "http://127.0.0.1:\(server.port)/stream?3"]
            let output = Pipe()
            curl.standardOutput = output
            try curl.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            curl.waitUntilExit()
            #expect(curl.terminationStatus == 0)
            #expect(String(decoding: data, as: UTF8.self) == "data: 0\n\ndata: 1\n\ndata: 2\n\n")
        }
    }
}

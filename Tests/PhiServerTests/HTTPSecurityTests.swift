import Foundation
import Testing

@testable import PhiServer

/// API key, CORS, peer-gone detection and the warning for open binds.
@Suite("HTTP security and streaming cut-off")
struct HTTPSecurityTests {
    @Test("/v1 needs the bearer key; 401 in OpenAI's shape; the key is never logged")
    func apiKey() throws {
        let key = "sk-test-7f3a9c"
        try withServer({ $0.apiKey = key }) { server, _, logLines in
            let client = try RawClient(port: server.port)
            try client.send(get("/v1/models"))
            let missing = try client.readResponse()
            #expect(missing.status == 401)
            // OpenAI's words for a missing key (issue 27), and for a wrong one.
            #expect(
                missing.text
                    == #"{"error":{"message":"You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as 'x-api-key: <key>'. This server was started with --api-key.","type":"invalid_request_error","param":null,"code":null}}"#
            )
            try client.send(get("/v1/models", "Authorization: Bearer sk-test-7f3a9d\r\n"))
            let wrong = try client.readResponse()
            #expect(wrong.status == 401)
            #expect(wrong.text.contains(#""message":"Incorrect API key provided."#))
            #expect(wrong.text.contains(#""code":"invalid_api_key""#))
            try client.send(get("/v1/models", "Authorization: Bearer \(key)x\r\n"))
            #expect(try client.readResponse().status == 401)
            try client.send(get("/v1/models", "Authorization: bearer \(key)\r\n"))
            #expect(try client.readResponse().status == 200)
            try client.send(get("/hello"))  // outside /v1: no key needed
            #expect(try client.readResponse().status == 200)
            // Anthropic's clients send `x-api-key`, and read errors in Anthropic's shape.
            try client.send(get("/v1/models", "x-api-key: \(key)\r\n"))
            #expect(try client.readResponse().status == 200)
            try client.send(get("/v1/messages", "x-api-key: \(key)x\r\n"))
            let anthropic = try client.readResponse()
            #expect(anthropic.status == 401)
            #expect(anthropic.text.hasPrefix(#"{"type":"error","error":{"type":"authentication_error","#))
            #expect(eventually { logLines.all.count >= 7 })
            #expect(!logLines.all.contains { $0.contains(key) || $0.contains("sk-test") })
        }
    }

    @Test("constant-time comparison is plain equality")
    func constantTime() {
        #expect(constantTimeEqual(Array("abc".utf8), Array("abc".utf8)))
        #expect(!constantTimeEqual(Array("abd".utf8), Array("abc".utf8)))
        #expect(!constantTimeEqual(Array("ab".utf8), Array("abc".utf8)))
        #expect(!constantTimeEqual([], Array("abc".utf8)))
        #expect(constantTimeEqual([], []))
        #expect(bearerToken("Bearer  k") == Array("k".utf8))
        #expect(bearerToken("Basic k") == nil)
    }

    @Test("CORS: headers on responses, preflight answered 204; off by default")
    func cors() throws {
        try withServer({ $0.corsOrigin = "http://localhost:3000"; $0.apiKey = "k" }) { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(
                "OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: t\r\nOrigin: http://localhost:3000\r\n"
                    + "Access-Control-Request-Method: POST\r\n"
                    + "Access-Control-Request-Headers: authorization, content-type\r\n\r\n")
            let preflight = try client.readResponse()
            #expect(preflight.status == 204)
            #expect(preflight["access-control-allow-origin"] == "http://localhost:3000")
            #expect(preflight["access-control-allow-methods"]?.contains("POST") == true)
            #expect(preflight["access-control-allow-headers"] == "authorization, content-type")
            #expect(preflight["content-length"] == nil)
            try client.send(get("/hello"))
            #expect(try client.readResponse()["access-control-allow-origin"] == "http://localhost:3000")
            try client.send(get("/v1/models"))  // refusals carry CORS too, so browsers can read them
            let refused = try client.readResponse()
            #expect(refused.status == 401 && refused["access-control-allow-origin"] != nil)
        }
        try withServer { server, _, _ in
            let client = try RawClient(port: server.port)
            try client.send(get("/hello"))
            #expect(try client.readResponse()["access-control-allow-origin"] == nil)
        }
    }

    @Test("isPeerGone turns true when the client closes mid-stream", arguments: [false, true])
    func peerGone(reset: Bool) throws {
        try withServer { server, responder, _ in
            let client = try RawClient(port: server.port)
            try client.send(get("/endless"))
            _ = try client.readHead()
            _ = try client.readLine()  // the first chunk's size: the stream is running
            if reset { client.reset() } else { client.close() }
            #expect(eventually { responder.log.sawPeerGone })
            #expect(eventually { server.openConnections == 0 })
        }
    }

    @Test("a non-loopback bind without a key warns through the log sink")
    func openBindWarning() throws {
        let logLines = LogLines()
        var configuration = HTTPServerConfiguration(host: "0.0.0.0", port: 0)
        configuration.log = { logLines.append($0) }
        _ = try HTTPServer(configuration: configuration, responder: TestResponder())
        #expect(logLines.all.count == 1 && logLines.all[0].hasPrefix("warning: "))
        configuration.apiKey = "k"
        _ = try HTTPServer(configuration: configuration, responder: TestResponder())
        #expect(logLines.all.count == 1)
    }

    @Test("a busy port is a clear error")
    func busyPort() throws {
        try withServer { server, _, _ in
            #expect(throws: HTTPServerError.self) {
                try HTTPServer(
                    configuration: HTTPServerConfiguration(port: server.port), responder: TestResponder())
            }
        }
    }
}

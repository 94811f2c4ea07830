import Testing

@testable import PhiServer

/// The parser as a pure function over bytes.
@Suite("HTTP request parser")
struct HTTPRequestParserTests {
    let parser = HTTPRequestParser(maxHeaderBytes: 256, maxBodyBytes: 100, maxHeaderCount: 4)

    private func parse(_ text: String) -> HTTPRequestParse { parser.parse(Array(text.utf8)) }

    private func status(_ text: String) -> Int? {
        if case .failure(let error) = parse(text) { return error.status }
        return nil
    }

    @Test("a request with body, query and case-insensitive headers")
    func basic() throws {
        let text = "POST /v1/chat/completions?x=1&y HTTP/1.1\r\nHost: a\r\ncontent-TYPE: application/json\r\n"
            + "Content-Length: 2\r\n\r\n{}GET"
        guard case .request(let request, let head, let consumed) = parse(text) else {
            Issue.record("not parsed")
            return
        }
        #expect(request.method == "POST" && request.path == "/v1/chat/completions")
        #expect(request.query == "x=1&y" && request.version == "HTTP/1.1")
        #expect(request.headers["Content-Type"] == "application/json")
        #expect(request.body == Array("{}".utf8))
        #expect(consumed == text.utf8.count - 3)
        #expect(head.keepAlive && !head.expectsContinue)
    }

    @Test("incomplete until the blank line and the whole body are there")
    func incomplete() {
        let text = "POST /e HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc"
        let bytes = Array(text.utf8)
        for cut in 0..<bytes.count {
            let result = parser.parse(Array(bytes[0..<cut]))
            guard case .incomplete = result else {
                Issue.record("prefix of \(cut) bytes: \(result)")
                return
            }
        }
        guard case .request = parser.parse(bytes) else { Issue.record("whole request"); return }
    }

    @Test("lenient where harmless: LF line ends, leading empty lines, absolute form, OWS")
    func lenient() throws {
        guard case .request(let request, _, _) = parse("\r\n\nGET http://h:1/p?q HTTP/1.1\nHost:  a \n\n")
        else {
            Issue.record("not parsed")
            return
        }
        #expect(request.path == "/p" && request.query == "q" && request.headers["host"] == "a")
        guard case .request(let options, _, _) = parse("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n") else {
            Issue.record("asterisk form")
            return
        }
        #expect(options.path == "*")
    }

    @Test("keep-alive and Expect rules")
    func connectionRules() {
        func head(_ text: String) -> HTTPRequestHead? {
            if case .head(let head) = parser.parseHead(Array(text.utf8)) { return head }
            return nil
        }
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\nConnection: Keep-Alive, Close\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\n\r\n")?.keepAlive == false)
        #expect(head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")?.keepAlive == true)
        #expect(head("GET / HTTP/1.1\r\nHost: a\r\nExpect: 100-Continue\r\n\r\n")?.expectsContinue == true)
        #expect(head("GET / HTTP/1.0\r\nExpect: 100-continue\r\n\r\n")?.expectsContinue == false)
        #expect(status("GET / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n") == 417)
    }

    @Test(
        "status codes for bad input",
        arguments: [
            ("GET / HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "b", count: 300))\r\n\r\n", 431),
            ("GET /\(String(repeating: "b", count: 300)) HTTP/1.1\r\n", 414),
            ("GET / HTTP/1.1\r\nHost: a\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n", 431),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 101\r\n\r\n", 413),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999999999999999\r\n\r\n", 413),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n", 400),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 411),
            ("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
            ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 400),
            ("GET / HTTP/1.1\r\nHost: a\u{01}\r\n\r\n", 400),
            ("GET /a#b HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET * HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET http:/// HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET / HTTP/1.1 \r\nHost: a\r\n\r\n", 400),
            ("GET / http/1.1\r\nHost: a\r\n\r\n", 400),
            ("GET / HTTP/3.0\r\nHost: a\r\n\r\n", 505),
            ("G(T / HTTP/1.1\r\nHost: a\r\n\r\n", 400),
            ("\r\r\n", 400),
        ])
    func badInput(_ text: String, _ expected: Int) {
        #expect(status(text) == expected)
    }

    @Test("a malformed request line fails before the head is complete")
    func earlyFailure() {
        #expect(status("GET /\u{7F} HTTP/1.1\r\nHost:") == 400)
    }

    @Test("parsing from an offset (pipelined input) consumes exactly one request")
    func offset() {
        let bytes = Array("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        guard case .request(let a, _, let first) = parser.parse(bytes),
            case .request(let b, _, let second) = parser.parse(bytes, from: first)
        else {
            Issue.record("not parsed")
            return
        }
        #expect(a.path == "/a" && b.path == "/b" && first + second == bytes.count)
    }
}

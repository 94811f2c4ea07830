// What the parsed request line and fields mean for framing and the connection: the request
// target's form, Host, Content-Length, Transfer-Encoding, Connection and Expect.
// Standard library only (compiled into the fuzz harness with HTTPRequestParser.swift).

extension HTTPRequestParser {
    func interpret(
        method: String, target: Range<Int>, version: String, headers: HTTPHeaders, headLength: Int,
        in buffer: [UInt8]
    ) -> HTTPHeadParse {
        let bad = { (status: Int, reason: String) in
            HTTPHeadParse.failure(HTTPParseError(status: status, reason: reason))
        }
        guard let (path, query) = splitTarget(Array(buffer[target]), method: method) else {
            return bad(400, "malformed request target")
        }
        let isHTTP10 = version == "HTTP/1.0"
        // RFC 9112 §3.2: an HTTP/1.1 request without exactly one Host gets 400.
        let hosts = headers.values("host")
        if hosts.count > 1 || (!isHTTP10 && hosts.isEmpty) {
            return bad(400, hosts.isEmpty ? "missing Host header" : "more than one Host header")
        }

        let lengths = headers.values("content-length")
        let codings = headers.values("transfer-encoding")
        if !codings.isEmpty {
            if !lengths.isEmpty {
                return bad(400, "both Transfer-Encoding and Content-Length")
            }
            if isHTTP10 {
                return bad(400, "Transfer-Encoding in an HTTP/1.0 request")
            }
            let last = codings.last!.split(separator: ",").last
            if let last, last.trimmingSpaces().lowercasedASCII() == "chunked" {
                return bad(411, "chunked request bodies are not accepted; send Content-Length")
            }
            return bad(501, "unsupported Transfer-Encoding")
        }
        var contentLength = 0
        if !lengths.isEmpty {
            guard lengths.count == 1 else { return bad(400, "more than one Content-Length header") }
            switch parseContentLength(lengths[0]) {
            case nil: return bad(400, "Content-Length is not a number")
            case .some(let n) where n > maxBodyBytes:
                return bad(413, "request body is larger than \(maxBodyBytes) bytes")
            case .some(let n): contentLength = n
            }
        }

        var expectsContinue = false
        if let expect = headers["expect"] {
            guard expect.trimmingSpaces().lowercasedASCII() == "100-continue" else {
                return bad(417, "unsupported Expect value")
            }
            expectsContinue = !isHTTP10
        }

        let connection = headers.values("connection").flatMap {
            $0.split(separator: ",").map { $0.trimmingSpaces().lowercasedASCII() }
        }
        let keepAlive =
            connection.contains("close")
            ? false : (isHTTP10 ? connection.contains("keep-alive") : true)

        return .head(
            HTTPRequestHead(
                method: method, path: path, query: query, version: version, headers: headers,
                contentLength: contentLength, keepAlive: keepAlive,
                expectsContinue: expectsContinue, headLength: headLength))
    }
}

/// Origin form ("/p?q"), asterisk form ("*", OPTIONS only) and absolute form
/// ("http://host/p?q", RFC 9112 §3.2.2: servers must accept it) → (path, query).
private func splitTarget(_ target: [UInt8], method: String) -> (String, String?)? {
    var bytes = ArraySlice(target)
    if bytes == [UInt8(ascii: "*")] {
        return method == "OPTIONS" ? ("*", nil) : nil
    }
    if bytes.first != UInt8(ascii: "/") {
        let lowered = bytes.map(asciiLower)
        let scheme =
            lowered.starts(with: "http://".utf8)
            ? 7 : lowered.starts(with: "https://".utf8) ? 8 : 0
        guard scheme > 0 else { return nil }
        let authority = bytes.dropFirst(scheme)
        guard let host = authority.first, host != UInt8(ascii: "/") else { return nil }
        if let slash = authority.firstIndex(of: UInt8(ascii: "/")) {
            bytes = authority[slash...]
        } else if let question = authority.firstIndex(of: UInt8(ascii: "?")) {
            bytes = [UInt8(ascii: "/")] + authority[question...]
        } else {
            bytes = [UInt8(ascii: "/")]
        }
    }
    guard let question = bytes.firstIndex(of: UInt8(ascii: "?")) else {
        return (String(decoding: bytes, as: UTF8.self), nil)
    }
    return (
        String(decoding: bytes[..<question], as: UTF8.self),
        String(decoding: bytes[(question + 1)...], as: UTF8.self)
    )
}

/// 1*DIGIT that fits an Int; nil otherwise. (A number too large for Int is over any limit,
/// but "too large" and "not a number" must not be confused with each other, so cap at 18.)
private func parseContentLength(_ text: String) -> Int? {
    let digits = Array(text.utf8)
    guard !digits.isEmpty, digits.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
    // Leading zeros are allowed; more than 18 significant digits is larger than any body limit.
    let significant = digits.drop { $0 == 0x30 }
    if significant.count > 18 { return Int.max }
    return significant.reduce(0) { $0 * 10 + Int($1 - 0x30) }
}

extension StringProtocol {
    func trimmingSpaces() -> Substring {
        var s = Substring(self)
        while let first = s.first, first == " " || first == "\t" { s = s.dropFirst() }
        while let last = s.last, last == " " || last == "\t" { s = s.dropLast() }
        return s
    }

    func lowercasedASCII() -> String {
        String(decoding: utf8.map(asciiLower), as: UTF8.self)
    }
}

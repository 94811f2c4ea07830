// HTTP/1.1 request parsing (RFC 9112) as a pure function over bytes, so it can be fuzzed
// (scripts/fuzz, target `http`). Standard library only; every index is a checked Array
// subscript, so a bug traps instead of reading out of bounds.
//
// Strict where leniency lets two parsers disagree about where a request ends (request
// smuggling): duplicate or non-numeric Content-Length, Transfer-Encoding together with
// Content-Length, whitespace before a header colon, obs-fold, a bare CR, control bytes in a
// value → 400. Lenient where it is harmless: a line may end in LF alone, and empty lines
// before a request line are skipped (RFC 9112 §2.2).
//
// Request bodies must come with Content-Length: a chunked request body gets 411 (no client
// of an OpenAI server sends one; httpx, requests, curl and browsers send a length).

/// What a parsed request head says, besides the fields of `HTTPRequest`.
public struct HTTPRequestHead: Sendable {
    public var method: String
    public var path: String
    public var query: String?
    public var version: String
    public var headers: HTTPHeaders
    /// Content-Length, 0 when absent.
    public var contentLength: Int
    /// Whether the client wants the connection kept open after this request
    /// (HTTP/1.1: unless `Connection: close`; HTTP/1.0: only with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// `Expect: 100-continue` on an HTTP/1.1 request (RFC 9110 §10.1.1: ignored on 1.0).
    public var expectsContinue: Bool
    /// Bytes from the start of the input through the blank line ending the head.
    public var headLength: Int

    public var isHTTP10: Bool { version == "HTTP/1.0" }
}

/// Why a request cannot be served; the connection answers `status` and closes.
public struct HTTPParseError: Error, Sendable, Equatable {
    /// 400, 411, 413, 414, 417, 431, 501 or 505.
    public var status: Int
    /// One line for the error body, e.g. "Content-Length is not a number".
    public var reason: String

    public init(status: Int, reason: String) {
        self.status = status
        self.reason = reason
    }
}

public enum HTTPHeadParse: Sendable {
    /// No blank line yet and still within the limits: read more.
    case incomplete
    case head(HTTPRequestHead)
    case failure(HTTPParseError)
}

public enum HTTPRequestParse: Sendable {
    case incomplete
    /// A whole request; `consumed` bytes (head + body) belong to it, the rest to the next one.
    case request(HTTPRequest, HTTPRequestHead, consumed: Int)
    case failure(HTTPParseError)
}

public struct HTTPRequestParser: Sendable {
    /// Request line + header fields + blank line (plus skipped leading empty lines).
    public var maxHeaderBytes: Int
    public var maxBodyBytes: Int
    public var maxHeaderCount: Int

    public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1 << 20, maxHeaderCount: Int = 100) {
        self.maxHeaderBytes = maxHeaderBytes
        self.maxBodyBytes = maxBodyBytes
        self.maxHeaderCount = maxHeaderCount
    }

    /// Parses a whole request (head and body) starting at `buffer[start]`.
    public func parse(_ buffer: [UInt8], from start: Int = 0) -> HTTPRequestParse {
        switch parseHead(buffer, from: start) {
        case .incomplete: return .incomplete
        case .failure(let error): return .failure(error)
        case .head(let head):
            let bodyStart = start + head.headLength
            guard buffer.count - bodyStart >= head.contentLength else { return .incomplete }
            let request = HTTPRequest(
                method: head.method, path: head.path, query: head.query, version: head.version,
                headers: head.headers,
                body: Array(buffer[bodyStart..<(bodyStart + head.contentLength)]))
            return .request(request, head, consumed: head.headLength + head.contentLength)
        }
    }

    /// Parses the head starting at `buffer[start]`: the request line and header fields, up to
    /// and including the blank line. A complete line that is malformed fails at once, even
    /// before the head is complete.
    public func parseHead(_ buffer: [UInt8], from start: Int = 0) -> HTTPHeadParse {
        precondition(start >= 0 && start <= buffer.count, "parse start outside the buffer")
        let limit = min(buffer.count, start + maxHeaderBytes)
        var position = start
        // RFC 9112 §2.2: a server SHOULD ignore at least one empty line before the request line.
        while position < limit, buffer[position] == lf || buffer[position] == cr {
            if buffer[position] == cr {
                guard position + 1 < buffer.count else { return .incomplete }
                guard buffer[position + 1] == lf else { return fail(400, "bare CR before the request line") }
            }
            position += 1
        }
        var requestLine: Range<Int>?
        var fieldLines: [Range<Int>] = []
        while true {
            guard let line = nextLine(buffer, from: position, limit: limit) else {
                if limit - start >= maxHeaderBytes {
                    return requestLine == nil
                        ? fail(414, "request line is longer than \(maxHeaderBytes) bytes")
                        : fail(431, "request header block is larger than \(maxHeaderBytes) bytes")
                }
                return .incomplete
            }
            position = line.next
            if let problem = line.problem { return .failure(problem) }
            if requestLine == nil {
                requestLine = line.content
                if case .failure(let error) = parseRequestLine(buffer, line.content) {
                    return .failure(error)
                }
                continue
            }
            if line.content.isEmpty { break }
            guard fieldLines.count < maxHeaderCount else {
                return fail(431, "more than \(maxHeaderCount) header fields")
            }
            fieldLines.append(line.content)
        }
        guard case .line(let method, let target, let version) = parseRequestLine(buffer, requestLine!)
        else { preconditionFailure("request line was checked above") }
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(fieldLines.count)
        for range in fieldLines {
            switch parseField(buffer, range) {
            case .failure(let error): return .failure(error)
            case .field(let name, let value): fields.append((name, value))
            }
        }
        return interpret(
            method: method, target: target, version: version, headers: HTTPHeaders(fields),
            headLength: position - start, in: buffer)
    }
}

let cr: UInt8 = 0x0D
let lf: UInt8 = 0x0A
let space: UInt8 = 0x20
let tab: UInt8 = 0x09

private func fail(_ status: Int, _ reason: String) -> HTTPHeadParse {
    .failure(HTTPParseError(status: status, reason: reason))
}

/// tchar (RFC 9110 §5.6.2): the bytes allowed in a method or a header field name.
@inline(__always)
func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"),
        UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"),
        UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
        UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default: return false
    }
}

private struct Line {
    /// The line without its CRLF / LF.
    var content: Range<Int>
    /// Index after the LF.
    var next: Int
    var problem: HTTPParseError?
}

/// The line starting at `from`, if its LF lies before `limit`.
private func nextLine(_ buffer: [UInt8], from: Int, limit: Int) -> Line? {
    var i = from
    while i < limit {
        if buffer[i] == lf {
            var end = i
            if end > from, buffer[end - 1] == cr { end -= 1 }
            var problem: HTTPParseError?
            if buffer[from..<end].contains(cr) {
                problem = HTTPParseError(status: 400, reason: "bare CR in the request head")
            }
            return Line(content: from..<end, next: i + 1, problem: problem)
        }
        i += 1
    }
    return nil
}

private enum RequestLine {
    case line(method: String, target: Range<Int>, version: String)
    case failure(HTTPParseError)
}

/// `method SP request-target SP HTTP-version`, single spaces (RFC 9112 §3).
private func parseRequestLine(_ buffer: [UInt8], _ range: Range<Int>) -> RequestLine {
    let bad = { (reason: String) in RequestLine.failure(HTTPParseError(status: 400, reason: reason)) }
    guard let firstSpace = buffer[range].firstIndex(of: space) else {
        return bad("malformed request line")
    }
    let afterMethod = (firstSpace + 1)..<range.upperBound
    guard let secondSpace = buffer[afterMethod].firstIndex(of: space) else {
        return bad("malformed request line (no HTTP version)")
    }
    let methodBytes = range.lowerBound..<firstSpace
    let target = (firstSpace + 1)..<secondSpace
    let versionBytes = (secondSpace + 1)..<range.upperBound
    guard !methodBytes.isEmpty, buffer[methodBytes].allSatisfy(isTokenByte) else {
        return bad("malformed method in the request line")
    }
    guard !target.isEmpty, buffer[target].allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x23 }) else {
        return bad("malformed request target")
    }
    let version = Array(buffer[versionBytes])
    let prefix = Array("HTTP/".utf8)
    guard version.count == 8, Array(version[0..<5]) == prefix, version[6] == UInt8(ascii: "."),
        (0x30...0x39).contains(version[5]), (0x30...0x39).contains(version[7])
    else { return bad("malformed HTTP version in the request line") }
    guard version[5] == UInt8(ascii: "1"), version[7] <= UInt8(ascii: "1") else {
        return .failure(HTTPParseError(status: 505, reason: "only HTTP/1.0 and HTTP/1.1 are served"))
    }
    return .line(
        method: String(decoding: buffer[methodBytes], as: UTF8.self), target: target,
        version: String(decoding: version, as: UTF8.self))
}

private enum FieldLine {
    case field(name: String, value: String)
    case failure(HTTPParseError)
}

/// `field-name ":" OWS field-value OWS` (RFC 9112 §5).
private func parseField(_ buffer: [UInt8], _ range: Range<Int>) -> FieldLine {
    let bad = { (reason: String) in FieldLine.failure(HTTPParseError(status: 400, reason: reason)) }
    if buffer[range.lowerBound] == space || buffer[range.lowerBound] == tab {
        return bad("folded header line (obs-fold) is not accepted")
    }
    guard let colon = buffer[range].firstIndex(of: UInt8(ascii: ":")) else {
        return bad("header line without a colon")
    }
    let name = range.lowerBound..<colon
    guard !name.isEmpty, buffer[name].allSatisfy(isTokenByte) else {
        return bad("malformed header field name")
    }
    var valueStart = colon + 1
    var valueEnd = range.upperBound
    while valueStart < valueEnd, buffer[valueStart] == space || buffer[valueStart] == tab {
        valueStart += 1
    }
    while valueEnd > valueStart, buffer[valueEnd - 1] == space || buffer[valueEnd - 1] == tab {
        valueEnd -= 1
    }
    let value = buffer[valueStart..<valueEnd]
    // field-vchar = VCHAR / obs-text, with SP and HTAB inside.
    guard value.allSatisfy({ $0 >= 0x20 && $0 != 0x7F || $0 == tab }) else {
        return bad("control character in header '\(String(decoding: buffer[name], as: UTF8.self))'")
    }
    return .field(
        name: String(decoding: buffer[name], as: UTF8.self),
        value: String(decoding: value, as: UTF8.self))
}

/// Writes the one response to one request. Framing headers (Content-Length,
/// Transfer-Encoding, Connection) are the writer's: the ones a responder passes are dropped.
///
/// Use it from one thread at a time (the responder's, or a generation thread it hands the
/// writer to while it waits); `isPeerGone` may be asked from any thread, at any time, also
/// after the response ended.
public final class HTTPResponseWriter: @unchecked Sendable {
    enum State: Equatable { case idle, streaming, finished, failed }

    private let socket: ConnectionSocket
    private let isHEAD: Bool
    private let isHTTP10: Bool
    /// Added to every response (CORS).
    private let extraHeaders: [(String, String)]
    private let clientKeepAlive: Bool
    /// Asked when the head is written: a stopping server says `Connection: close`.
    private let isStopping: @Sendable () -> Bool
    /// The head said `Connection: close` (or the stream is close-delimited), so the
    /// connection ends with this response.
    private(set) var closesConnection = false

    private(set) var state: State = .idle
    private(set) var status = 0
    /// Body bytes written (without chunk framing), for the access log.
    private(set) var bodyBytes = 0
    /// The stream is close-delimited (HTTP/1.0), so the connection ends with it.
    private var closeDelimited = false

    /// Filled by the responder for the access log (e.g. "tokens=12+30").
    public var logNote: String = ""

    init(
        socket: ConnectionSocket, isHEAD: Bool, isHTTP10: Bool, clientKeepAlive: Bool,
        extraHeaders: [(String, String)], isStopping: @escaping @Sendable () -> Bool = { false }
    ) {
        self.socket = socket
        self.isHEAD = isHEAD
        self.isHTTP10 = isHTTP10
        self.clientKeepAlive = clientKeepAlive
        self.extraHeaders = extraHeaders
        self.isStopping = isStopping
    }

    /// True once the peer has closed or reset the connection (checked without blocking);
    /// a generation loop polls this between tokens and stops within one token.
    public var isPeerGone: Bool { socket.isPeerGone }

    /// A whole response with Content-Length (none for 1xx/204/304; no body bytes for HEAD).
    public func send(status: Int, headers: [(String, String)], body: [UInt8]) throws(HTTPWriteError) {
        try begin(status)
        var framing: [(String, String)] = []
        if !HTTPStatus.forbidsBody(status) { framing.append(("Content-Length", String(body.count))) }
        var bytes = try head(status: status, headers: headers, framing: framing)
        if !isHEAD && !HTTPStatus.forbidsBody(status) { bytes += body }
        try transmit(bytes)
        bodyBytes = body.count
        state = .finished
    }

    /// Starts a streamed response: chunked on HTTP/1.1, close-delimited on HTTP/1.0.
    public func startStream(status: Int, headers: [(String, String)]) throws(HTTPWriteError) {
        try begin(status)
        guard !HTTPStatus.forbidsBody(status) else {
            state = .failed
            throw .misuse("status \(status) cannot have a streamed body")
        }
        closeDelimited = isHTTP10
        let framing = isHTTP10 ? [] : [("Transfer-Encoding", "chunked")]
        try transmit(try head(status: status, headers: headers, framing: framing))
        state = .streaming
    }

    /// One chunk, flushed at once. Empty writes send nothing (an empty chunk would end the
    /// stream).
    public func write(_ bytes: [UInt8]) throws(HTTPWriteError) {
        guard state == .streaming else { throw misuse("write() outside a started stream") }
        guard !bytes.isEmpty else { return }
        bodyBytes += bytes.count
        if isHEAD { return }
        if closeDelimited {
            try transmit(bytes)
        } else {
            var chunk = Array(String(bytes.count, radix: 16).utf8) + [cr, lf]
            chunk += bytes
            chunk += [cr, lf]
            try transmit(chunk)
        }
    }

    /// Ends the stream (the last chunk on HTTP/1.1; on HTTP/1.0 the connection closes).
    public func finish() throws(HTTPWriteError) {
        guard state == .streaming else { throw misuse("finish() outside a started stream") }
        if !closeDelimited && !isHEAD { try transmit(Array("0\r\n\r\n".utf8)) }
        state = .finished
    }

    // MARK: - Internals

    private func begin(_ status: Int) throws(HTTPWriteError) {
        guard state == .idle else { throw misuse("a second response to one request") }
        guard (100...999).contains(status), !(100..<200).contains(status) else {
            throw misuse("status \(status) is not a final status code")
        }
        self.status = status
    }

    private func misuse(_ what: String) -> HTTPWriteError {
        state = .failed
        return .misuse(what)
    }

    private func head(status: Int, headers: [(String, String)], framing: [(String, String)])
        throws(HTTPWriteError) -> [UInt8]
    {
        var text = "HTTP/1.1 \(status) \(HTTPStatus.reason(status))\r\n"
        for (name, value) in headers + extraHeaders {
            guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte),
                !value.utf8.contains(where: { $0 == cr || $0 == lf || $0 == 0 })
            else { throw misuse("invalid response header '\(name)'") }
            if ["content-length", "transfer-encoding", "connection"].contains(name.lowercasedASCII()) {
                continue
            }
            text += "\(name): \(value)\r\n"
        }
        for (name, value) in framing { text += "\(name): \(value)\r\n" }
        closesConnection = !clientKeepAlive || closeDelimited || isStopping()
        if closesConnection {
            text += "Connection: close\r\n"
        } else if isHTTP10 {
            text += "Connection: keep-alive\r\n"
        }
        text += "\r\n"
        return Array(text.utf8)
    }

    private func transmit(_ bytes: [UInt8]) throws(HTTPWriteError) {
        do {
            try socket.sendAll(bytes)
        } catch {
            state = .failed
            throw error
        }
    }
}

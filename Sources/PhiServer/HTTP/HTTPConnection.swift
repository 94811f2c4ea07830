/// What every connection of one server shares.
struct ConnectionContext: Sendable {
    let configuration: HTTPServerConfiguration
    let parser: HTTPRequestParser
    let guards: RequestGuards
    let responder: any HTTPResponder
    let stop: StopSignal
}

/// One client connection on its own thread: reads requests in order (pipelined ones too),
/// answers each, keeps the connection alive while both sides want it.
final class HTTPConnection {
    private let socket: ConnectionSocket
    private let context: ConnectionContext
    /// What the server looks at to pick a connection to close when it is full.
    private let activity: ConnectionActivity
    /// Received bytes not yet consumed by a request: at most one head (limit), one body
    /// (limit) and one receive more.
    private var buffer: [UInt8] = []

    init(socket: ConnectionSocket, context: ConnectionContext, activity: ConnectionActivity) {
        self.socket = socket
        self.context = context
        self.activity = activity
    }

    func run() {
        socket.setSendTimeout(context.configuration.writeTimeout)
        while let (head, started) = readHead(), let request = readBody(head, started: started) {
            guard serve(request, head, started: started) else { break }
        }
        socket.close()
    }

    // MARK: - Reading

    private enum Wait { case more, closed }

    /// Reads until a whole head is buffered. nil: the connection is done (closed, idle
    /// timeout, server stopping, or an error was answered).
    private func readHead() -> (HTTPRequestHead, ContinuousClock.Instant)? {
        let configuration = context.configuration
        var started: ContinuousClock.Instant? = buffer.isEmpty ? nil : .now
        var parseNeeded = !buffer.isEmpty
        while true {
            if parseNeeded {
                switch context.parser.parseHead(buffer) {
                case .head(let head): return (head, started ?? .now)
                case .failure(let error):
                    refuse(error.status, error.reason, started: started ?? .now)
                    return nil
                case .incomplete: break
                }
            }
            let idle = buffer.isEmpty
            activity.enter(started == nil ? .idle : .reading)
            let timeout: Duration
            if let started {
                timeout = ContinuousClock.now.duration(to: started + configuration.requestTimeout)
            } else {
                timeout = configuration.idleTimeout
            }
            // An idle connection ends when the server stops; a started request is read on.
            switch socket.waitReadable(wake: idle ? context.stop.wake : nil, timeout: max(timeout, .zero)) {
            case .woken: return nil
            case .timedOut:
                if let started { refuse(408, "the request took too long to arrive", started: started) }
                return nil
            case .readable:
                let before = buffer.count
                guard case .bytes = socket.receive(into: &buffer) else { return nil }
                if started == nil { started = .now }
                parseNeeded =
                    buffer[before...].contains(lf) || buffer.count >= configuration.maxHeaderBytes
            }
        }
    }

    /// Reads the body after `head` (answering `Expect: 100-continue` first) and consumes the
    /// request from the buffer.
    private func readBody(_ head: HTTPRequestHead, started: ContinuousClock.Instant) -> HTTPRequest? {
        let needed = head.headLength + head.contentLength
        activity.enter(.reading)
        if buffer.count < needed && head.expectsContinue {
            do { try socket.sendAll(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) } catch { return nil }
        }
        let deadline = started + context.configuration.requestTimeout
        while buffer.count < needed {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, socket.waitReadable(wake: nil, timeout: left) == .readable else {
                refuse(408, "the request body took too long to arrive", started: started)
                return nil
            }
            guard case .bytes = socket.receive(into: &buffer) else { return nil }
        }
        let request = HTTPRequest(
            method: head.method, path: head.path, query: head.query, version: head.version,
            headers: head.headers, body: Array(buffer[head.headLength..<needed]))
        buffer.removeFirst(needed)
        return request
    }

    // MARK: - Answering

    /// Answers one request; true when the connection stays open for the next one.
    private func serve(_ request: HTTPRequest, _ head: HTTPRequestHead, started: ContinuousClock.Instant)
        -> Bool
    {
        activity.enter(.answering)
        let requestID = RequestID.of(request.headers)
        let writer = HTTPResponseWriter(
            socket: socket, isHEAD: request.method == "HEAD", isHTTP10: head.isHTTP10,
            clientKeepAlive: head.keepAlive,
            extraHeaders: context.guards.corsHeaders + [(RequestID.header, requestID)],
            isStopping: { [stop = context.stop] in stop.isStopping })
        if let answer = context.guards.answer(request) {
            try? writer.send(status: answer.status, headers: answer.headers, body: answer.body)
        } else {
            context.responder.respond(to: request, writer: writer)
        }
        if writer.state == .idle {
            let missing = CannedResponse.error(500, "the server produced no response")
            try? writer.send(status: missing.status, headers: missing.headers, body: missing.body)
            writer.logNote += writer.logNote.isEmpty ? "no response" : " no response"
        }
        var note = writer.logNote
        if writer.state == .streaming { note += note.isEmpty ? "stream not finished" : " (stream not finished)" }
        if writer.state == .failed { note += note.isEmpty ? "write failed" : " (write failed)" }
        logLine(
            "\(request.method) \(request.path)", status: writer.status, bytes: writer.bodyBytes,
            started: started, requestID: requestID, note: note)
        // A stream the responder left open cannot be ended cleanly: closing tells the client
        // it was cut (no final chunk), instead of a silently truncated "complete" answer.
        return writer.state == .finished && !writer.closesConnection && !context.stop.isStopping
    }

    /// Answers an error found before a whole request was read, and closes the connection.
    private func refuse(_ status: Int, _ reason: String, started: ContinuousClock.Instant) {
        let response = CannedResponse.error(status, reason)
        let writer = HTTPResponseWriter(
            socket: socket, isHEAD: false, isHTTP10: false, clientKeepAlive: false,
            extraHeaders: context.guards.corsHeaders)
        try? writer.send(status: response.status, headers: response.headers, body: response.body)
        logLine("-", status: status, bytes: response.body.count, started: started, note: reason)
        socket.lingeringClose()
    }

    private func logLine(
        _ request: String, status: Int, bytes: Int, started: ContinuousClock.Instant,
        requestID: String? = nil, note: String
    ) {
        guard !context.configuration.quiet else { return }
        let elapsed = ContinuousClock.now - started
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        let entry = AccessLogEntry(
            peer: socket.peer, request: request, status: status, bytes: bytes,
            milliseconds: Int(ms.rounded()), requestID: requestID, note: note)
        context.configuration.log(entry.line(context.configuration.accessLogFormat))
    }
}

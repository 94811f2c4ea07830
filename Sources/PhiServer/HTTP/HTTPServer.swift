import Foundation
import Synchronization

/// What answers requests: the OpenAI layer, or a test's responder.
public protocol HTTPResponder: Sendable {
    /// Called on the connection's own thread; may block for as long as generation takes.
    /// Must answer through `writer` (send, or startStream … finish); returning without an
    /// answer gets a 500, returning from an unfinished stream closes the connection.
    func respond(to request: HTTPRequest, writer: HTTPResponseWriter)
}

/// HTTP/1.1 on POSIX sockets, one thread per connection, at most
/// `configuration.maxConnections` of them (`ConnectionTable`: a newcomer takes the place of
/// the longest idle or slow connection; only when every connection is being answered does
/// it get 503, or the answer to GET /health).
///
/// What the layer answers itself (an OpenAI-shaped JSON error body, then close unless noted):
/// 400 malformed request line / header / target, missing or repeated Host on 1.1, duplicate or
/// non-numeric Content-Length, Transfer-Encoding with Content-Length; 408 head or body slower
/// than `requestTimeout`; 411 chunked request body (send Content-Length); 413 Content-Length over
/// `maxBodyBytes` (also instead of 100 Continue); 414 request line over `maxHeaderBytes`; 417
/// an Expect other than 100-continue; 431 head over `maxHeaderBytes` or more than 100 fields;
/// 501 unknown transfer coding; 505 HTTP other than 1.0/1.1; 503 over the connection
/// cap while every connection is being answered (Retry-After: 1). Kept open: 405 TRACE/CONNECT, 501 unknown method, 401 for `/v1` without
/// the key, 204 CORS preflight, 500 when a responder returned without answering.
///
///     let server = try HTTPServer(configuration: config, responder: router)
///     // elsewhere (a signal source): server.stop()
///     try server.run()   // returns once stopped and every connection ended
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    /// The port actually listened on (the chosen free port when the configuration says 0).
    public let port: Int

    private let listener: ListeningSocket
    private let context: ConnectionContext
    private let stopSignal: StopSignal
    private let table: Mutex<ConnectionTable>
    private let refusing = Mutex(0)
    private let connections = DispatchGroup()

    /// Binds and listens at once (so `port` is known and a busy port fails here); a
    /// non-loopback host without an API key is warned about through `configuration.log`.
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder)
        throws(HTTPServerError)
    {
        self.configuration = configuration
        table = Mutex(
            ConnectionTable(
                capacity: configuration.maxConnections,
                perClient: configuration.connectionsPerClient))
        listener = try ListeningSocket(host: configuration.host, port: configuration.port)
        port = listener.port
        stopSignal = StopSignal(wake: try WakePipe())
        context = ConnectionContext(
            configuration: configuration,
            parser: HTTPRequestParser(
                maxHeaderBytes: configuration.maxHeaderBytes,
                maxBodyBytes: configuration.maxBodyBytes),
            guards: RequestGuards(apiKey: configuration.apiKey, corsOrigin: configuration.corsOrigin),
            responder: responder, stop: stopSignal)
        if !isLoopback(configuration.host) && configuration.apiKey == nil {
            configuration.log(
                "warning: listening on \(configuration.host):\(port) without an API key: anyone "
                    + "who can reach this address can use the model (set --api-key)")
        }
    }

    /// Accepts connections until `stop()`, then waits for every open connection to end
    /// (in-flight requests finish; idle kept-alive connections close at once).
    public func run() throws(HTTPServerError) {
        while !stopSignal.isStopping {
            switch pollReadable(listener.fd, wake: stopSignal.wake, timeout: .seconds(3600)) {
            case .woken, .timedOut: continue
            case .readable:
                if let socket = listener.accept() {
                    admit(socket)
                } else {
                    // EMFILE and the like: don't spin on a listen queue we cannot drain.
                    Thread.sleep(forTimeInterval: 0.01)
                }
            }
        }
        listener.stopListening()
        connections.wait()
    }

    /// Stops accepting and lets in-flight requests finish; `run()` then returns. Only an
    /// atomic store and a write(2), so it may be called from any thread or a signal handler.
    public func stop() { stopSignal.stop() }

    /// The number of connections being served now (tests watch it).
    public var openConnections: Int { table.withLock { $0.count } }

    private func admit(_ socket: ConnectionSocket) {
        let activity = ConnectionActivity()
        let entry = ConnectionTable.Entry(
            socket: socket, activity: activity, client: socket.clientAddress)
        // `evict` is a no-op on a socket its thread already closed (the socket's own lock),
        // so a victim that just ended is harmless.
        let admitted = table.withLock { table -> Int? in
            guard let (id, evicted) = table.admit(entry) else { return nil }
            for victim in evicted { victim.socket.evict() }
            if !configuration.quiet {
                for victim in evicted {
                    configuration.log(
                        "\(victim.socket.peer) \"-\" closed: idle while the server was full "
                            + "(\(configuration.maxConnections) connections, "
                            + "\(configuration.connectionsPerClient) per client)")
                }
            }
            return id
        }
        guard let id = admitted else { return refuseOverCapacity(socket) }
        connections.enter()
        let context = self.context
        Thread.detachNewThread { [self] in
            HTTPConnection(socket: socket, context: context, activity: activity).run()
            table.withLock { $0.remove(id) }
            connections.leave()
        }
    }

    /// Every connection is being answered: 503 with Retry-After, on a short-lived thread of
    /// its own (a lingering close takes up to half a second); past 16 of those, the socket is
    /// simply closed. GET /health is answered even so: a monitor must tell a busy server from
    /// a dead one.
    private func refuseOverCapacity(_ socket: ConnectionSocket) {
        let admitted = refusing.withLock { count in
            guard count < 16 else { return false }
            count += 1
            return true
        }
        guard admitted else { return socket.close() }
        connections.enter()
        let configuration = self.configuration
        let context = self.context
        Thread.detachNewThread { [self] in
            defer {
                refusing.withLock { $0 -= 1 }
                connections.leave()
            }
            if let health = Self.healthRequest(on: socket, context: context) {
                let writer = HTTPResponseWriter(
                    socket: socket, isHEAD: health.method == "HEAD", isHTTP10: false,
                    clientKeepAlive: false, extraHeaders: context.guards.corsHeaders)
                context.responder.respond(to: health, writer: writer)
                if !configuration.quiet {
                    configuration.log(
                        "\(socket.peer) \"\(health.method) \(health.path)\" \(writer.status) "
                            + "\(writer.bodyBytes)B 0ms server full")
                }
                return socket.lingeringClose()
            }
            var response = CannedResponse.error(
                503, "the server is at its limit of \(configuration.maxConnections) connections")
            response.headers.append(("Retry-After", "1"))
            let writer = HTTPResponseWriter(
                socket: socket, isHEAD: false, isHTTP10: false, clientKeepAlive: false,
                extraHeaders: context.guards.corsHeaders)
            try? writer.send(status: 503, headers: response.headers, body: response.body)
            if !configuration.quiet {
                configuration.log("\(socket.peer) \"-\" 503 \(response.body.count)B 0ms too many connections")
            }
            socket.lingeringClose()
        }
    }

    /// The request on a refused connection, if it is GET (or HEAD) /health: its head is
    /// read for at most a second.
    private static func healthRequest(
        on socket: ConnectionSocket, context: ConnectionContext
    ) -> HTTPRequest? {
        var buffer: [UInt8] = []
        let deadline = ContinuousClock.now + .seconds(1)
        while buffer.count < context.configuration.maxHeaderBytes {
            switch context.parser.parseHead(buffer) {
            case .head(let head):
                guard head.method == "GET" || head.method == "HEAD", head.path == "/health"
                else { return nil }
                return HTTPRequest(
                    method: head.method, path: head.path, query: head.query,
                    version: head.version, headers: head.headers, body: [])
            case .failure: return nil
            case .incomplete: break
            }
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, socket.waitReadable(wake: nil, timeout: left) == .readable,
                case .bytes = socket.receive(into: &buffer)
            else { return nil }
        }
        return nil
    }
}

/// The server's stop flag and the pipe that wakes every idle poll when it is set.
final class StopSignal: Sendable {
    let wake: WakePipe
    private let flag = Atomic<Bool>(false)

    init(wake: WakePipe) { self.wake = wake }

    var isStopping: Bool { flag.load(ordering: .relaxed) }

    func stop() {
        if !flag.exchange(true, ordering: .relaxed) { wake.signal() }
    }
}

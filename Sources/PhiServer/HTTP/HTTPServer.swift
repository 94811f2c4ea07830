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
/// `configuration.maxConnections` of them (one more gets 503 and is closed).
///
/// What the layer answers itself (an OpenAI-shaped JSON error body, then close unless noted):
/// 400 malformed request line / header / target, missing or repeated Host on 1.1, duplicate or
/// non-numeric Content-Length, Transfer-Encoding with Content-Length; 408 head or body slower
/// than `requestTimeout`; 411 chunked request body (send Content-Length); 413 Content-Length over
/// `maxBodyBytes` (also instead of 100 Continue); 414 request line over `maxHeaderBytes`; 417
/// an Expect other than 100-continue; 431 head over `maxHeaderBytes` or more than 100 fields;
/// 501 unknown transfer coding; 505 HTTP other than 1.0/1.1; 503 over the connection
/// cap (Retry-After: 1). Kept open: 405 TRACE/CONNECT, 501 unknown method, 401 for `/v1` without
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
    private let open = Mutex<(connections: Int, refusing: Int)>((0, 0))
    private let connections = DispatchGroup()

    /// Binds and listens at once (so `port` is known and a busy port fails here); a
    /// non-loopback host without an API key is warned about through `configuration.log`.
    public init(configuration: HTTPServerConfiguration, responder: any HTTPResponder)
        throws(HTTPServerError)
    {
        self.configuration = configuration
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
    public var openConnections: Int { open.withLock { $0.connections } }

    private func admit(_ socket: ConnectionSocket) {
        let admitted = open.withLock { state in
            guard state.connections < configuration.maxConnections else { return false }
            state.connections += 1
            return true
        }
        guard admitted else { return refuseOverCapacity(socket) }
        connections.enter()
        let context = self.context
        Thread.detachNewThread { [self] in
            HTTPConnection(socket: socket, context: context).run()
            open.withLock { $0.connections -= 1 }
            connections.leave()
        }
    }

    /// Over the cap: 503 with Retry-After, on a short-lived thread of its own (a lingering
    /// close takes up to half a second); past 16 of those, the socket is simply closed.
    private func refuseOverCapacity(_ socket: ConnectionSocket) {
        let refusing = open.withLock { state in
            guard state.refusing < 16 else { return false }
            state.refusing += 1
            return true
        }
        guard refusing else { return socket.close() }
        connections.enter()
        let configuration = self.configuration
        Thread.detachNewThread { [self] in
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
            open.withLock { $0.refusing -= 1 }
            connections.leave()
        }
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

/// Where and how `HTTPServer` listens, and the limits that protect it.
public struct HTTPServerConfiguration: Sendable {
    /// A numeric IPv4/IPv6 address or a host name; loopback unless told otherwise.
    public var host: String = "127.0.0.1"
    /// 0 picks a free port; `HTTPServer.port` tells which.
    public var port: Int = 8080
    /// Open connections at most. When one more arrives, the connection idle the longest
    /// (kept alive with no request, or still sending its request) is closed to make room:
    /// connections that send nothing cannot lock real requests out. Only when every
    /// connection is being answered does the newcomer get 503 (GET /health is still answered).
    public var maxConnections: Int = 64
    /// Open connections from one client address at most (default: half of `maxConnections`);
    /// over it, that client's own longest idle connection makes room, else 503.
    public var maxConnectionsPerClient: Int?
    /// Request line + header fields (→ 431; a request line alone over it → 414).
    public var maxHeaderBytes: Int = 16 * 1024
    /// Content-Length above this → 413 (before any of the body is read).
    public var maxBodyBytes: Int = 1 << 20
    /// A kept-alive connection with no new request for this long is closed quietly.
    public var idleTimeout: Duration = .seconds(15)
    /// A request whose head and body take longer than this to arrive, counted from its first
    /// byte, gets 408 and the connection is closed (slow clients).
    public var requestTimeout: Duration = .seconds(30)
    /// A send that cannot make progress for this long (a client that stopped reading) fails
    /// with `HTTPWriteError.timedOut` and the connection is closed.
    public var writeTimeout: Duration = .seconds(30)
    /// With a key, every `/v1` and `/v1/…` request needs `Authorization: Bearer <key>`.
    public var apiKey: String?
    /// With an origin (or "*"), responses carry CORS headers and OPTIONS preflights get 204.
    public var corsOrigin: String?
    /// No access log lines (warnings still go to `log`).
    public var quiet: Bool = false
    /// The per-client cap in effect.
    public var connectionsPerClient: Int { maxConnectionsPerClient ?? max(1, maxConnections / 2) }
    /// Access log lines as text or as JSON objects.
    public var accessLogFormat: AccessLogFormat = .text
    /// Receives the access log and warnings, one line each, without a newline.
    public var log: @Sendable (String) -> Void = HTTPServerConfiguration.standardError

    public init(
        host: String = "127.0.0.1", port: Int = 8080, apiKey: String? = nil,
        corsOrigin: String? = nil, quiet: Bool = false
    ) {
        self.host = host
        self.port = port
        self.apiKey = apiKey
        self.corsOrigin = corsOrigin
        self.quiet = quiet
    }

    /// Writes the line and a newline to stderr in one call, so lines from different
    /// connections never interleave.
    public static let standardError: @Sendable (String) -> Void = { line in
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = systemWrite(2, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}

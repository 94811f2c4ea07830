import PhiFormats

/// Why the server could not start.
public enum HTTPServerError: UserFacingError, Equatable {
    case badPort(Int)
    case resolve(String, String)
    case bind(host: String, port: Int, reason: String)
    case system(String, String)

    public var message: String {
        switch self {
        case .badPort(let port): "port \(port) is not between 0 and 65535"
        case .resolve(let host, let reason): "cannot resolve host '\(host)': \(reason)"
        case .bind(let host, let port, let reason): "cannot listen on \(host):\(port): \(reason)"
        case .system(let call, let reason): "\(call) failed: \(reason)"
        }
    }

    public var hint: String? {
        switch self {
        case .bind: "is another server using the port? pick another with --port (0 = any free port)"
        default: nil
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .badPort: .usage
        default: .unavailable
        }
    }
}

/// Why a response could not be written.
public enum HTTPWriteError: UserFacingError, Equatable {
    /// The client closed or reset the connection; stop generating.
    case peerGone
    /// The client stopped reading for longer than the write timeout.
    case timedOut
    /// The responder broke the protocol (two responses, a write before startStream, a header
    /// with a line break); the connection is closed.
    case misuse(String)

    public var message: String {
        switch self {
        case .peerGone: "the client closed the connection"
        case .timedOut: "the client stopped reading the response"
        case .misuse(let what): "HTTP response misuse: \(what)"
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .misuse: .software
        default: .unavailable
        }
    }
}

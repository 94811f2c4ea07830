import Foundation

/// One HTTP request as phikit makes it (a GET, or a POST/PUT with a body for uploads): no automatic redirects (the Hub client follows them itself,
/// so it can read the Hub's headers on the 302 and keep the token off other hosts), optional
/// `Range` start, and the timeouts that turn a dead connection into a retryable error.
struct HTTPRequest: Sendable {
    var url: String
    var method: HTTPMethod = .get
    /// What a POST or PUT sends; ignored for GET.
    var body: HTTPBody?
    /// Extra request headers, `Name: value` pairs. `Authorization` is added here only by
    /// `HubClient`, and only for the endpoint's own origin.
    var headers: [(name: String, value: String)] = []
    /// Ask for the bytes from this offset on (`Range: bytes=N-`); nil for the whole body.
    var rangeStart: Int?
    /// Let the server compress the body (API JSON). Never for files: their size and hash are
    /// those of the uncompressed bytes.
    var acceptCompression = false
    var timeouts: HTTPTimeouts = HTTPTimeouts()
}

enum HTTPMethod: String, Sendable {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
}

/// A request body. Files are read in place (a part of a multi-GB weight file is never held in
/// memory), so a retried upload simply reads the same range again.
enum HTTPBody: Sendable {
    case bytes([UInt8])
    case fileRange(path: String, offset: Int, length: Int)

    var length: Int {
        switch self {
        case .bytes(let bytes): bytes.count
        case .fileRange(_, _, let length): length
        }
    }
}

struct HTTPTimeouts: Sendable, Equatable {
    /// Seconds to establish the TCP (and TLS) connection.
    var connect: Int = 10
    /// A transfer that moves no byte for this many seconds is abandoned (and retried):
    /// libcurl's LOW_SPEED_LIMIT 1 byte/s over LOW_SPEED_TIME.
    var stall: Int = 30
}

/// Status line and headers of a response, before (or without) its body.
struct HTTPResponseHead: Sendable {
    var status: Int
    var headers: HTTPHeaders
    /// The URL this response came from.
    var url: String
}

/// Response headers, looked up case-insensitively; a repeated header keeps its last value.
struct HTTPHeaders: Sendable {
    private var values: [String: String] = [:]

    init() {}

    init(_ pairs: [(String, String)]) {
        for (name, value) in pairs { self[name] = value }
    }

    subscript(name: String) -> String? {
        get { values[name.lowercased()] }
        set { values[name.lowercased()] = newValue }
    }

    /// Parses one raw header line (`Name: value\r\n`); status lines and blank lines are ignored.
    mutating func add(line: Substring) {
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        let value = line[line.index(after: colon)...].trimmingCharacters(
            in: .whitespacesAndNewlines)
        guard !name.isEmpty else { return }
        self[name] = value
    }
}

/// What a body receiver answers for each chunk: keep going, or stop the transfer now (the
/// reason is kept by the receiver; libcurl only learns that the write was refused).
enum BodyDecision: Sendable {
    case proceed
    case abort
}

/// Receives a response: `head` once, before any body byte (or at the end when there is no
/// body), then the body in chunks, on the thread that called `perform`.
protocol HTTPResponseReceiver: AnyObject {
    func receive(head: HTTPResponseHead) -> BodyDecision
    func receive(body: UnsafeRawBufferPointer) -> BodyDecision
}

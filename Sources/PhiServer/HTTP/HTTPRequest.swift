// The request as the OpenAI layer sees it (the seam in TEAM.md). Pure values: this file and
// HTTPRequestParser.swift use nothing but the standard library, so the fuzz harness compiles
// them on their own (scripts/fuzz/run.sh).

/// Header fields in arrival order, looked up without regard to case.
public struct HTTPHeaders: Sendable {
    public var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
    }

    /// The first field named `name` (ASCII case-insensitive), or nil.
    public subscript(name: String) -> String? {
        fields.first { Self.namesEqual($0.name, name) }?.value
    }

    /// Every field named `name`, in arrival order.
    public func values(_ name: String) -> [String] {
        fields.filter { Self.namesEqual($0.name, name) }.map(\.value)
    }

    /// Field names are ASCII tokens, so comparing lowercased UTF-8 bytes is exact.
    static func namesEqual(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count
            && zip(a.utf8, b.utf8).allSatisfy { asciiLower($0) == asciiLower($1) }
    }
}

@inline(__always)
func asciiLower(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}

public struct HTTPRequest: Sendable {
    /// "GET", "POST", … exactly as sent (methods are case-sensitive).
    public var method: String
    /// "/v1/chat/completions": the target without its query, not percent-decoded.
    public var path: String
    /// What followed "?", undecoded; nil when there was no "?".
    public var query: String?
    /// "HTTP/1.1" or "HTTP/1.0".
    public var version: String
    public var headers: HTTPHeaders
    /// Exactly Content-Length bytes (empty when the request had none).
    public var body: [UInt8]

    public init(
        method: String, path: String, query: String? = nil, version: String = "HTTP/1.1",
        headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.version = version
        self.headers = headers
        self.body = body
    }
}

import PhiFormats

/// A response the HTTP layer writes itself (errors, preflights, refusals).
struct CannedResponse {
    var status: Int
    var headers: [(String, String)] = []
    var body: [UInt8] = []

    /// OpenAI's error shape, which OpenAI clients parse for any status:
    /// `{"error":{"message":…,"type":…,"param":null,"code":…}}`.
    static func error(_ status: Int, _ message: String, code: String? = nil) -> CannedResponse {
        let json = JSONValue.object([
            (
                "error",
                .object([
                    ("message", .string(message)),
                    ("type", .string(status >= 500 ? "server_error" : "invalid_request_error")),
                    ("param", .null),
                    ("code", code.map(JSONValue.string) ?? .null),
                ])
            )
        ])
        return CannedResponse(
            status: status, headers: [("Content-Type", "application/json")],
            body: Array(json.serialized().utf8))
    }
}

/// What the HTTP layer decides before a responder sees a request: methods it does not serve,
/// CORS preflights, and the API key on `/v1`.
struct RequestGuards: Sendable {
    /// "Bearer" credentials are compared as bytes; nil: no key needed.
    let apiKey: [UInt8]?
    let corsOrigin: String?

    init(apiKey: String?, corsOrigin: String?) {
        self.apiKey = apiKey.map { Array($0.utf8) }
        self.corsOrigin = corsOrigin
    }

    static let servedMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"]
    static let knownUnservedMethods: Set<String> = ["TRACE", "CONNECT"]

    /// Added to every response when CORS is on.
    var corsHeaders: [(String, String)] {
        guard let corsOrigin else { return [] }
        var headers = [("Access-Control-Allow-Origin", corsOrigin)]
        if corsOrigin != "*" { headers.append(("Vary", "Origin")) }
        return headers
    }

    /// The layer's own answer to `request`, or nil to hand it to the responder.
    func answer(_ request: HTTPRequest) -> CannedResponse? {
        if Self.knownUnservedMethods.contains(request.method) {
            var refusal = CannedResponse.error(405, "method \(request.method) is not allowed")
            refusal.headers.append(("Allow", "GET, HEAD, POST, OPTIONS"))
            return refusal
        }
        if !Self.servedMethods.contains(request.method) {
            return .error(501, "method \(request.method) is not implemented")
        }
        if corsOrigin != nil && request.method == "OPTIONS" {
            return preflight(request)
        }
        if let apiKey, request.path == "/v1" || request.path.hasPrefix("/v1/") {
            // Anthropic's clients send the key as `x-api-key`.
            let presented =
                bearerToken(request.headers["authorization"])
                ?? request.headers["x-api-key"].map { Array($0.utf8) }
            guard let presented, constantTimeEqual(presented, apiKey) else {
                // OpenAI's words for each case, so clients and people recognise them; Anthropic's
                // error shape on its own route.
                let message =
                    presented == nil
                    ? "You didn't provide an API key. You need to provide your API key in an "
                        + "Authorization header using Bearer auth (i.e. Authorization: "
                        + "Bearer YOUR_KEY), or as 'x-api-key: <key>'. This server was started "
                        + "with --api-key."
                    : "Incorrect API key provided. Send it as 'Authorization: Bearer <key>' or "
                        + "'x-api-key: <key>'."
                var refusal =
                    request.path.hasPrefix("/v1/messages")
                    ? CannedResponse(
                        status: 401, headers: [("Content-Type", "application/json")],
                        body: Array(AnthropicError.json(status: 401, message: message).serialized().utf8))
                    : presented == nil
                        ? CannedResponse.error(401, message)
                        : CannedResponse.error(401, message, code: "invalid_api_key")
                refusal.headers.append(("WWW-Authenticate", "Bearer"))
                return refusal
            }
        }
        return nil
    }

    /// A CORS preflight: 204 with what the browser asked for (methods and headers we serve).
    private func preflight(_ request: HTTPRequest) -> CannedResponse {
        var allowedHeaders = "Authorization, Content-Type"
        if let asked = request.headers["access-control-request-headers"],
            asked.utf8.allSatisfy({ isTokenByte($0) || $0 == UInt8(ascii: ",") || $0 == space })
        {
            allowedHeaders = asked
        }
        return CannedResponse(
            status: 204,
            headers: [
                ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"),
                ("Access-Control-Allow-Headers", allowedHeaders),
                ("Access-Control-Max-Age", "600"),
            ])
    }
}

/// The credentials of `Authorization: Bearer <token>` (scheme case-insensitive).
func bearerToken(_ authorization: String?) -> [UInt8]? {
    guard let authorization else { return nil }
    let bytes = Array(authorization.utf8)
    let scheme = Array("bearer ".utf8)
    guard bytes.count > scheme.count, bytes[0..<scheme.count].map(asciiLower) == scheme else {
        return nil
    }
    return Array(bytes[scheme.count...].drop { $0 == space })
}

/// Equal bytes, in time that depends on the lengths only, never on where the first
/// difference is (so the key cannot be guessed byte by byte from response times).
func constantTimeEqual(_ presented: [UInt8], _ expected: [UInt8]) -> Bool {
    var difference = presented.count ^ expected.count
    let length = max(presented.count, expected.count)
    for i in 0..<length {
        let a = i < presented.count ? presented[i] : 0
        let b = i < expected.count ? expected[i] : 0
        difference |= Int(a ^ b)
    }
    return difference == 0
}

import PhiFormats

/// Errors in the Anthropic Messages API's shape: `{"type": "error", "error": {"type": …,
/// "message": …}}`, its error type named after the HTTP status as Anthropic names them. The
/// checks that find them are the same as the OpenAI endpoints' (`APIError`); only the shape
/// of the answer differs.
enum AnthropicError {
    static func type(of status: Int) -> String {
        switch status {
        case 401: "authentication_error"
        case 403: "permission_error"
        case 404: "not_found_error"
        case 413: "request_too_large"
        case 429: "rate_limit_error"
        case 503, 529: "overloaded_error"
        case 400..<500: "invalid_request_error"
        default: "api_error"
        }
    }

    static func json(status: Int, message: String) -> JSONValue {
        .object([
            ("type", .string("error")),
            ("error", .object([("type", .string(type(of: status))), ("message", .string(message))])),
        ])
    }

    static func json(_ error: APIError) -> JSONValue { json(status: error.status, message: error.message) }
}

extension ResponseChannel {
    func sendAnthropic(_ error: APIError) throws {
        try sendJSON(
            status: error.status, JSONBody(value: AnthropicError.json(error)),
            headers: error.headers.map { ($0.name, $0.value) })
    }
}

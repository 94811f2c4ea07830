import PhiFormats

/// An error answered in OpenAI's shape:
/// `{"error": {"message": …, "type": …, "param": …, "code": …}}`.
struct APIError: Error, Sendable, Equatable {
    var status: Int
    var message: String
    var type: String
    var param: String?
    var code: String?
    /// Extra response headers (Retry-After).
    var headers: [Header] = []

    struct Header: Sendable, Equatable {
        var name: String
        var value: String
    }

    static func invalidRequest(_ message: String, param: String? = nil, code: String? = nil)
        -> APIError
    {
        APIError(
            status: 400, message: message, type: "invalid_request_error", param: param, code: code)
    }

    static func invalidType(_ param: String, expected: String) -> APIError {
        invalidRequest("'\(param)' must be \(expected)", param: param, code: "invalid_type")
    }

    static func unknownModel(_ name: String, served: String) -> APIError {
        APIError(
            status: 404,
            message: "The model '\(name)' does not exist: this server serves '\(served)'",
            type: "invalid_request_error", param: "model", code: "model_not_found")
    }

    /// `"adapter"` names no adapter the server loaded (404, as vLLM answers an unknown LoRA
    /// `model`).
    static func unknownAdapter(_ name: String, loaded: [String]) -> APIError {
        let served =
            loaded.isEmpty
            ? "this server loaded none (phikit serve --adapter NAME=DIR)"
            : "this server has " + loaded.map { "'\($0)'" }.joined(separator: ", ")
        return APIError(
            status: 404, message: "The adapter '\(name)' does not exist: \(served)",
            type: "invalid_request_error", param: "adapter", code: "adapter_not_found")
    }

    static func contextLength(prompt: Int, completion: Int?, context: Int) -> APIError {
        let asked =
            completion.map {
                "However, you requested \(prompt + $0) tokens (\(prompt) in the messages, \($0) "
                    + "in the completion)."
            } ?? "However, your messages resulted in \(prompt) tokens."
        return invalidRequest(
            "This model's maximum context length is \(context) tokens. \(asked) Please reduce "
                + "the length of the messages or completion.",
            param: "messages", code: "context_length_exceeded")
    }

    static func queueFull(waiting: Int) -> APIError {
        APIError(
            status: 503,
            message: "The server is busy: every slot is generating and \(waiting) requests are "
                + "waiting. Retry shortly.",
            type: "server_error", param: nil, code: "queue_full",
            headers: [Header(name: "Retry-After", value: "1")])
    }

    static let stopping = APIError(
        status: 503, message: "The server is shutting down.", type: "server_error", param: nil,
        code: "shutting_down")

    static func notFound(_ method: String, _ path: String) -> APIError {
        APIError(
            status: 404, message: "Unknown request URL: \(method) \(path)",
            type: "invalid_request_error", param: nil, code: "unknown_url")
    }

    static func methodNotAllowed(_ method: String, _ path: String, allowed: String) -> APIError {
        APIError(
            status: 405, message: "\(method) is not allowed on \(path): use \(allowed)",
            type: "invalid_request_error", param: nil, code: "method_not_allowed",
            headers: [Header(name: "Allow", value: allowed)])
    }

    static func server(_ message: String) -> APIError {
        APIError(status: 500, message: message, type: "server_error", param: nil, code: nil)
    }

    var json: JSONValue {
        .object([
            (
                "error",
                .object([
                    ("message", .string(message)), ("type", .string(type)),
                    ("param", param.map(JSONValue.string) ?? .null),
                    ("code", code.map(JSONValue.string) ?? .null),
                ])
            )
        ])
    }
}

extension ResponseChannel {
    func send(_ error: APIError) throws {
        try sendJSON(
            status: error.status, JSONBody(value: error.json),
            headers: error.headers.map { ($0.name, $0.value) })
    }
}

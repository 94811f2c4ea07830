import Foundation
import PhiFormats

/// How the access log is written: one text line per request (the default), or one JSON
/// object per line for log collectors (`serve --log-format json`).
public enum AccessLogFormat: String, Sendable, CaseIterable {
    case text, json
}

/// One line of the access log.
struct AccessLogEntry {
    var peer: String
    /// "POST /v1/responses", or "-" for a request that could not be read.
    var request: String
    var status: Int
    var bytes: Int
    var milliseconds: Int
    var requestID: String?
    /// What the responder or the layer adds ("tokens=12+30 cached=8 finish=stop").
    var note: String

    func line(_ format: AccessLogFormat) -> String {
        switch format {
        case .text:
            let shown = request.count > 200 ? request.prefix(200) + "…" : Substring(request)
            let id = requestID.map { " id=\($0)" } ?? ""
            let trailer = note.isEmpty ? "" : " \(note)"
            return "\(peer) \"\(shown)\" \(status) \(bytes)B \(milliseconds)ms\(id)\(trailer)"
        case .json:
            return JSONValue.object([
                ("time", .string(Date().formatted(.iso8601))), ("peer", .string(peer)),
                ("request", .string(String(request.prefix(200)))), ("status", .int(status)),
                ("bytes", .int(bytes)), ("ms", .int(milliseconds)),
                ("request_id", requestID.map(JSONValue.string) ?? .null),
                ("note", .string(note)),
            ]).serialized()
        }
    }
}

/// `X-Request-ID`: the client's (or a proxy's) id for the request, echoed on the response
/// and written to the access log so one request can be followed through a fleet; a new one
/// when none came. An id that is not a short plain token (up to 128 letters, digits and
/// `-_.:`) is replaced: it goes into a response header and a log line.
enum RequestID {
    static let header = "X-Request-ID"

    static func of(_ headers: HTTPHeaders) -> String {
        if let given = headers[header], !given.isEmpty, given.utf8.count <= 128,
            given.utf8.allSatisfy({ isAlphanumeric($0) || "-_.:".utf8.contains($0) })
        {
            return given
        }
        return UUID().uuidString.lowercased()
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
    }
}

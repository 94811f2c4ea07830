import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A `phikit serve` child on 127.0.0.1 and a free port, with its stderr (the listening line
/// and the access log) collected as it arrives. Killed when the object goes away, so a test
/// that does not `stop()` it leaves no server behind.
final class ServeProcess: @unchecked Sendable {
    let process = Process()
    private(set) var port = 0
    private let collected = Collected()
    private var stderrDone: DispatchSemaphore { collected.done }

    /// The stderr read so far. The reading thread holds this, not the ServeProcess: holding
    /// that would keep it (and its child) alive until the child exits, which it never would.
    private final class Collected: @unchecked Sendable {
        let lock = NSLock()
        var text = ""
        let done = DispatchSemaphore(value: 0)
    }

    init(_ model: String, _ options: [String] = []) throws {
        guard let url = Phikit.url else { throw Phikit.MissingBinary() }
        process.executableURL = url
        process.arguments = ["serve", model, "--port", "0", "--threads", "1"] + options
        var environment = ProcessInfo.processInfo.environment
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let handle = err.fileHandleForReading
        Thread.detachNewThread { [collected] in
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                collected.lock.withLock { collected.text += String(decoding: data, as: UTF8.self) }
            }
            collected.done.signal()
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline && process.isRunning {
            if let port = Self.listeningPort(stderr) {
                self.port = port
                return
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.terminate()
        throw ServeFailed(stderr: stderr)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var stderr: String { collected.lock.withLock { collected.text } }

    /// Access log lines so far.
    var accessLog: [String] {
        stderr.split(separator: "\n").map(String.init).filter { $0.contains("\" ") }
    }

    /// Sends `signal` and waits (at most 30 s) for the exit; returns the exit status.
    @discardableResult
    func stop(signal: Int32 = SIGTERM) -> Int32 {
        Phikit.interruptAndWait(process, doing: "serve", signal: signal)
        _ = stderrDone.wait(timeout: .now() + 5)
        return process.terminationStatus
    }

    func request(
        _ method: String, _ path: String, json: String? = nil, headers: [(String, String)] = []
    ) throws -> HTTPReply {
        try TestHTTP.request(port: port, method, path, body: json, headers: headers)
    }

    /// POSTs `json` and decodes the JSON answer.
    func post(_ path: String, _ json: [String: Any]) throws -> (status: Int, body: [String: Any])
    {
        let body = String(decoding: try JSONSerialization.data(withJSONObject: json), as: UTF8.self)
        let reply = try request("POST", path, json: body)
        return (reply.status, try reply.object())
    }

    /// POSTs `json` with `"stream": true`; the first choice of every chunk.
    func streamedChoices(_ path: String, _ json: [String: Any]) throws -> [[String: Any]] {
        var streamed = json
        streamed["stream"] = true
        let body = String(decoding: try JSONSerialization.data(withJSONObject: streamed), as: UTF8.self)
        return try request("POST", path, json: body).chunks().compactMap {
            ($0["choices"] as? [[String: Any]])?.first
        }
    }

    /// Waits until the access log has `count` lines.
    func waitForLog(count: Int, timeout: Double = 10) -> [String] {
        let deadline = Date().addingTimeInterval(timeout)
        while accessLog.count < count && Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        return accessLog
    }

    private static func listeningPort(_ text: String) -> Int? {
        guard let range = text.range(of: "on http://127.0.0.1:") else { return nil }
        let digits = text[range.upperBound...].prefix { $0.isNumber }
        return Int(digits)
    }

    struct ServeFailed: Error, CustomStringConvertible {
        var stderr: String
        var description: String { "phikit serve did not start: \(stderr)" }
    }
}

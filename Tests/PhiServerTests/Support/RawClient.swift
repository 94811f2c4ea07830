import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client on a raw TCP socket, so tests control every byte (pipelining, half-written
/// heads, early closes). Every read gives up after `timeout` so a broken server fails the
/// test instead of hanging it.
final class RawClient {
    private var fd: Int32
    private var pending: [UInt8] = []

    init(port: Int, timeout: Double = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError("socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw ClientError("connect to port \(port) failed: errno \(errno)")
        }
        var value = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    func send(_ text: String) throws { try send(Array(text.utf8)) }

    func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                Glibc.send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            guard n > 0 else { throw ClientError("send failed: errno \(errno)") }
            offset += n
        }
    }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Closes with RST instead of FIN (SO_LINGER 0), like a killed client.
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    /// Reads more bytes into `pending`; false at end of stream, throws on timeout.
    @discardableResult
    private func fill() throws -> Bool {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        if n < 0 {
            if errno == ECONNRESET { return false }
            throw ClientError("recv failed or timed out: errno \(errno)")
        }
        if n == 0 { return false }
        pending += chunk[0..<n]
        return true
    }

    /// Everything until the server closes the connection.
    func readToEnd() throws -> [UInt8] {
        while try fill() {}
        defer { pending = [] }
        return pending
    }

    /// True when the server closed the connection (nothing more arrives).
    func isClosedByServer() throws -> Bool {
        if !pending.isEmpty { return false }
        return try !fill()
    }

    func readLine() throws -> String {
        while true {
            if let lf = pending.firstIndex(of: 0x0A) {
                var line = Array(pending[..<lf])
                pending.removeFirst(lf + 1)
                if line.last == 0x0D { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            guard try fill() else { throw ClientError("connection closed inside a line") }
        }
    }

    func readBytes(_ count: Int) throws -> [UInt8] {
        while pending.count < count {
            guard try fill() else { throw ClientError("connection closed inside a body") }
        }
        defer { pending.removeFirst(count) }
        return Array(pending[..<count])
    }

    /// Status line and headers only.
    func readHead() throws -> RawResponse {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, let status = Int(parts[1]) else {
            throw ClientError("bad status line '\(statusLine)'")
        }
        var headers: [(String, String)] = []
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            let colon = line.firstIndex(of: ":")!
            headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        return RawResponse(status: status, headers: headers, body: [])
    }

    /// A whole response, framed by Content-Length, chunked encoding, or the close.
    func readResponse(toHEAD: Bool = false) throws -> RawResponse {
        var response = try readHead()
        if toHEAD || response.status == 204 || response.status == 304 { return response }
        if let length = response["content-length"] {
            response.body = try readBytes(Int(length)!)
        } else if response["transfer-encoding"]?.lowercased() == "chunked" {
            while true {
                let sizeLine = try readLine()
                guard let size = Int(sizeLine, radix: 16) else {
                    throw ClientError("bad chunk size '\(sizeLine)'")
                }
                response.chunks.append(size)
                if size == 0 {
                    guard try readLine().isEmpty else { throw ClientError("trailer after last chunk") }
                    break
                }
                response.body += try readBytes(size)
                guard try readLine().isEmpty else { throw ClientError("chunk without CRLF") }
            }
        } else {
            response.body = try readToEnd()
        }
        return response
    }
}

struct RawResponse {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]
    /// Sizes of the chunks of a chunked body, the final 0 included.
    var chunks: [Int] = []

    subscript(name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }?.1
    }

    var text: String { String(decoding: body, as: UTF8.self) }
}

struct ClientError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

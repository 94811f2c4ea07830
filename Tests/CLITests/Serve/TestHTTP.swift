import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// An HTTP answer as the tests read it.
struct HTTPReply {
    var status: Int
    var headers: [String: String]
    var body: String

    func object() throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] ?? [:]
    }

    /// The `data:` payloads of a server-sent event stream, in order (`[DONE]` included).
    var events: [String] {
        body.components(separatedBy: "\n\n").compactMap { block in
            block.hasPrefix("data: ") ? String(block.dropFirst(6)) : nil
        }
    }

    /// The JSON events of a stream, without `[DONE]`.
    func chunks() throws -> [[String: Any]] {
        try events.filter { $0 != "[DONE]" }.map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] ?? [:]
        }
    }
}

/// A small blocking HTTP/1.1 client on a plain socket, so tests can also hang up mid-answer.
enum TestHTTP {
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure("socket: \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            close(fd)
            throw Failure("connect to port \(port): errno \(errno)")
        }
        return fd
    }

    static func send(
        _ fd: Int32, _ method: String, _ path: String, body: String?, headers: [(String, String)]
    ) throws {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body {
            text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n"
        }
        text += "\r\n" + (body ?? "")
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw Failure("send: errno \(errno)") }
            offset += n
        }
    }

    static func request(
        port: Int, _ method: String, _ path: String, body: String? = nil,
        headers: [(String, String)] = []
    ) throws -> HTTPReply {
        let fd = try connect(port: port)
        defer { close(fd) }
        try send(fd, method, path, body: body, headers: headers)
        var raw: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            raw += buffer[0..<n]
        }
        return try parse(raw)
    }

    static func parse(_ raw: [UInt8]) throws -> HTTPReply {
        let text = String(decoding: raw, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure("no header end") }
        let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(lines[0].split(separator: " ")[1]) ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] =
                line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"] == "chunked" { body = dechunk(body) }
        return HTTPReply(status: status, headers: headers, body: body)
    }

    /// Chunk sizes count bytes, so this works on the UTF-8 bytes.
    static func dechunk(_ body: String) -> String {
        var bytes = Array(body.utf8)[...]
        var out: [UInt8] = []
        while let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) {
            let size = Int(String(decoding: bytes[bytes.startIndex..<lineEnd], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            let start = lineEnd + 2
            out += bytes[start..<min(start + size, bytes.endIndex)]
            bytes = bytes[min(start + size + 2, bytes.endIndex)...]
        }
        return String(decoding: out, as: UTF8.self)
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
}

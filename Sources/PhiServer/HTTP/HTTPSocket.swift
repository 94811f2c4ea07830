// Every POSIX call of the HTTP layer, in the manner of swift-system's Syscalls.swift: the
// rest of HTTP/ sees `ListeningSocket`, `ConnectionSocket` and `WakePipe`, never an errno.
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, bytes, count)
}

func errnoText(_ code: Int32 = errno) -> String { cText(strerror(code)) }

/// A C string as Swift text (lossy for bytes that are not UTF-8).
func cText(_ pointer: UnsafePointer<CChar>?) -> String {
    guard let pointer else { return "" }
    return String(decoding: UnsafeRawBufferPointer(start: pointer, count: strlen(pointer)), as: UTF8.self)
}

/// Not exported by Glibc's Swift module (a GNU extension): the peer shut down its writing side.
private let POLLRDHUP: Int16 = 0x2000

func milliseconds(_ duration: Duration) -> Int32 {
    let (seconds, attoseconds) = duration.components
    let ms = seconds * 1000 + attoseconds / 1_000_000_000_000_000
    return Int32(clamping: max(0, ms))
}

/// A pipe that is never read: once `signal()` wrote its byte, the read end stays readable,
/// so every poll that includes it wakes at once (a level-triggered broadcast for `stop()`).
/// `signal()` only calls write(2), so it is safe from a signal handler.
final class WakePipe: Sendable {
    let readEnd: Int32
    let writeEnd: Int32

    init() throws(HTTPServerError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw .system("pipe", errnoText()) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    deinit {
        close(readEnd)
        close(writeEnd)
    }
}

enum PollResult: Equatable { case readable, timedOut, woken }

/// Waits until `fd` is readable, `wake` fired (if given), or `timeout` passed.
func pollReadable(_ fd: Int32, wake: WakePipe?, timeout: Duration) -> PollResult {
    var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0)]
    if let wake { fds.append(pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0)) }
    let deadline = ContinuousClock.now + timeout
    while true {
        let left = ContinuousClock.now.duration(to: deadline)
        let n = poll(&fds, nfds_t(fds.count), milliseconds(left))
        if n < 0 && errno == EINTR { continue }
        if n < 0 { return .readable }  // let the read report the error
        if fds.count > 1, fds[1].revents != 0 { return .woken }
        if fds[0].revents != 0 { return .readable }
        if ContinuousClock.now >= deadline { return .timedOut }
    }
}

/// The bound, listening socket.
final class ListeningSocket: Sendable {
    let fd: Int32
    private let closed = Atomic<Bool>(false)
    /// The port actually bound (the chosen one when 0 was asked).
    let port: Int

    init(host: String, port: Int, backlog: Int32 = 128) throws(HTTPServerError) {
        guard (0...65535).contains(port) else { throw .badPort(port) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_PASSIVE
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolve(host, cText(gai_strerror(status)))
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket", errnoText()) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        guard bind(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else {
            let reason = errnoText()
            close(fd)
            throw .bind(host: host, port: port, reason: reason)
        }
        guard listen(fd, backlog) == 0 else {
            let reason = errnoText()
            close(fd)
            throw .system("listen", reason)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        self.fd = fd
        self.port = socketAddress(storage).port
    }

    /// The next connection, or nil when accept failed (EMFILE, ECONNABORTED, …: the caller
    /// keeps accepting).
    func accept() -> ConnectionSocket? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let client = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.accept(fd, $0, &length)
            }
        }
        guard client >= 0 else { return nil }
        _ = fcntl(client, F_SETFD, FD_CLOEXEC)
        let address = socketAddress(storage)
        return ConnectionSocket(fd: client, peer: address.description)
    }

    /// New connections are refused from now on.
    func stopListening() {
        if !closed.exchange(true, ordering: .relaxed) { _ = close(fd) }
    }

    deinit { stopListening() }
}

/// "127.0.0.1:8080" / "[::1]:8080" and the port of a socket address (getnameinfo reads
/// either family, numerically: no DNS).
private func socketAddress(_ storage: sockaddr_storage) -> (description: String, port: Int) {
    var copy = storage
    var host = [CChar](repeating: 0, count: 1025)  // NI_MAXHOST
    var service = [CChar](repeating: 0, count: 32)  // NI_MAXSERV
    let status = withUnsafePointer(to: &copy) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getnameinfo(
                $0, socklen_t(MemoryLayout<sockaddr_storage>.size), &host, socklen_t(host.count),
                &service, socklen_t(service.count), NI_NUMERICHOST | NI_NUMERICSERV)
        }
    }
    guard status == 0 else { return ("-", 0) }
    let port = Int(cText(service)) ?? 0
    let address = cText(host)
    let bracketed = Int32(storage.ss_family) == AF_INET6 ? "[\(address)]" : address
    return ("\(bracketed):\(port)", port)
}

/// Whether `host` names only this machine (so no API key is needed to keep others out).
func isLoopback(_ host: String) -> Bool {
    host == "localhost" || host == "::1" || host == "[::1]" || host.hasPrefix("127.")
}

enum ReadResult: Equatable { case bytes(Int), closed, failed }

/// One accepted connection. The connection's thread reads, writes and finally closes it;
/// `isPeerGone` may be asked from any thread, also after the close (then it is true).
final class ConnectionSocket: Sendable {
    private let fd: Int32
    let peer: String
    /// `closed`, guarded so that isPeerGone never polls a descriptor number that close(2)
    /// already handed back to the kernel for reuse.
    private let state = Mutex<(closed: Bool, gone: Bool)>((false, false))

    init(fd: Int32, peer: String) {
        self.fd = fd
        self.peer = peer
        var one: Int32 = 1
        // Small streamed chunks (one token each) go out at once.
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Bounds every blocking send: a client that stops reading cannot hold a thread forever.
    func setSendTimeout(_ timeout: Duration) {
        let ms = Int(milliseconds(timeout))
        var value = timeval(tv_sec: ms / 1000, tv_usec: (ms % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    func waitReadable(wake: WakePipe?, timeout: Duration) -> PollResult {
        pollReadable(fd, wake: wake, timeout: timeout)
    }

    /// Appends what one recv(2) returns to `buffer`.
    func receive(into buffer: inout [UInt8], maxBytes: Int = 64 * 1024) -> ReadResult {
        let oldCount = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: maxBytes))
        while true {
            let n = buffer.withUnsafeMutableBytes {
                recv(fd, $0.baseAddress! + oldCount, maxBytes, 0)
            }
            if n < 0 && errno == EINTR { continue }
            buffer.removeLast(maxBytes - max(n, 0))
            if n > 0 { return .bytes(n) }
            markGone()
            return n == 0 ? .closed : .failed
        }
    }

    /// Sends all of `bytes`; never raises SIGPIPE (MSG_NOSIGNAL).
    func sendAll(_ bytes: [UInt8]) throws(HTTPWriteError) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            }
            if n > 0 {
                offset += n
                continue
            }
            if n < 0 && errno == EINTR { continue }
            let code = errno
            markGone()
            throw code == EAGAIN || code == EWOULDBLOCK ? .timedOut : .peerGone
        }
    }

    /// True once the peer closed or reset: POLLRDHUP/POLLHUP/POLLERR, or a zero-byte peek.
    /// Bytes waiting to be read (a pipelined next request) do not count as gone.
    var isPeerGone: Bool {
        state.withLock { state in
            if state.closed || state.gone { return true }
            var entry = pollfd(fd: fd, events: Int16(POLLIN) | POLLRDHUP, revents: 0)
            guard poll(&entry, 1, 0) > 0 else { return false }
            if entry.revents & (Int16(POLLHUP) | Int16(POLLERR) | POLLRDHUP) != 0 {
                state.gone = true
                return true
            }
            var byte: UInt8 = 0
            let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
            if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
                state.gone = true
            }
            return state.gone
        }
    }

    private func markGone() { state.withLock { $0.gone = true } }

    /// The client's address without the port ("127.0.0.1", "[::1]"): what the per-client
    /// connection cap counts.
    var clientAddress: String {
        guard let colon = peer.lastIndex(of: ":") else { return peer }
        return String(peer[..<colon])
    }

    /// Ends the connection from another thread (the server needs its place): shuts the
    /// socket down, so the connection's thread sees end of input and closes it. Under the
    /// lock `close` takes, so it never reaches a descriptor number already reused.
    func evict() {
        state.withLock { state in
            guard !state.closed else { return }
            state.gone = true
            _ = shutdown(fd, Int32(SHUT_RDWR))
        }
    }

    /// Sends nothing more, then reads and drops what the client is still sending for a short
    /// while before closing, so an error response sent before the request was read is not
    /// destroyed by the reset that closing with unread data causes.
    func lingeringClose(for duration: Duration = .milliseconds(500)) {
        shutdown(fd, Int32(SHUT_WR))
        let deadline = ContinuousClock.now + duration
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        var drained = 0
        while drained < (4 << 20) {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero, pollReadable(fd, wake: nil, timeout: left) == .readable else { break }
            let n = scratch.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            drained += n
        }
        close()
    }

    func close() {
        state.withLock { state in
            guard !state.closed else { return }
            state.closed = true
            _ = Glibc.close(fd)
        }
    }

    deinit { close() }
}

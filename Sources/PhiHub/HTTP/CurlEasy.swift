import CCurl
import Foundation
import PhiFormats

/// The only code that touches libcurl (DESIGN.md: each C library is wrapped in one file).
///
/// One `CurlEasy` is one libcurl easy handle: not thread-safe, so each download thread owns
/// its own; reusing it keeps the connection (and TLS session) alive between requests.
/// Redirects are never followed here: the caller reads the 302 itself, because the Hub puts
/// the file's metadata on it and because the token must not follow it to another host.
final class CurlEasy {
    private let handle: UnsafeMutableRawPointer
    /// libcurl writes a detailed message here on failure (CURLOPT_ERRORBUFFER).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private let userAgent: String

    /// curl_global_init is not thread-safe; Swift runs a static initializer exactly once.
    private static let globalInit: CURLcode = curl_global_init(Int(CURL_GLOBAL_DEFAULT))

    init(userAgent: String) throws(TransportFailure) {
        guard Self.globalInit == CURLE_OK, let h = curl_easy_init() else {
            throw TransportFailure(kind: .other, detail: "cannot initialise libcurl")
        }
        handle = h
        self.userAgent = userAgent
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        if let failure = configureHandle() { throw failure }
    }

    deinit {
        curl_easy_cleanup(handle)
        errorBuffer.deallocate()
    }

    /// Sends `request` and hands the response to `receiver`. Returns the response head, or
    /// why no complete response arrived (the receiver may have seen part of the body);
    /// `cancellation` aborts the transfer (`.cancelled`) within a progress tick.
    func perform(
        _ request: HTTPRequest, receiver: HTTPResponseReceiver,
        cancellation: CancellationToken? = nil
    ) -> Result<HTTPResponseHead, TransportFailure> {
        let context = TransferContext(
            receiver: receiver, url: request.url, cancellation: cancellation)
        if request.method != .get, let body = request.body {
            do {
                context.bodySource = try RequestBodySource(body)
            } catch {
                return .failure(error)
            }
        }
        var headerList: UnsafeMutablePointer<curl_slist>?
        defer { curl_slist_free_all(headerList) }
        for (name, value) in request.headers {
            headerList = curl_slist_append(headerList, "\(name): \(value)")
        }
        if let start = request.rangeStart {
            headerList = curl_slist_append(headerList, "Range: bytes=\(start)-")
        }
        if !request.acceptCompression {
            headerList = curl_slist_append(headerList, "Accept-Encoding: identity")
        }
        if request.method != .get {
            // No `Expect: 100-continue` round trip before each body: the Hub and storage
            // hosts answer errors after the body as well.
            headerList = curl_slist_append(headerList, "Expect:")
        }
        errorBuffer[0] = 0
        let code = withExtendedLifetime(context) { () -> CURLcode in
            let opaque = Unmanaged.passUnretained(context).toOpaque()
            if let failure = configure(request, headers: headerList, context: opaque) {
                context.setupFailure = failure
                return CURLE_FAILED_INIT
            }
            return curl_easy_perform(handle)
        }
        if let failure = context.setupFailure { return .failure(failure) }
        guard code == CURLE_OK else { return .failure(failure(code, context: context)) }
        if !context.headDelivered { _ = context.deliverHead() }
        return .success(context.head)
    }

    /// What stays the same for every request. Set once: the handle is never reset, because
    /// libcurl 7.88 refuses to set CURLOPT_BUFFERSIZE again after curl_easy_reset.
    private func configureHandle() -> TransportFailure? {
        var code = CURLE_OK
        func check(_ c: CURLcode) { if code == CURLE_OK { code = c } }
        check(pk_curl_set_str(handle, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(pk_curl_set_str(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"))
        check(pk_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0))
        check(pk_curl_set_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
        check(pk_curl_set_long(handle, CURLOPT_NOSIGNAL, 1))
        check(pk_curl_set_long(handle, CURLOPT_TCP_KEEPALIVE, 1))
        check(pk_curl_set_long(handle, CURLOPT_LOW_SPEED_LIMIT, 1))
        check(pk_curl_set_str(handle, CURLOPT_USERAGENT, userAgent))
        check(pk_curl_set_ptr(handle, CURLOPT_ERRORBUFFER, errorBuffer))
        check(pk_curl_set_header_fn(handle, curlHeaderCallback))
        check(pk_curl_set_read_fn(handle, curlReadCallback))
        check(pk_curl_set_write_fn(handle, curlWriteCallback))
        check(pk_curl_set_xferinfo_fn(handle, curlProgressCallback))
        check(pk_curl_set_long(handle, CURLOPT_NOPROGRESS, 0))
        // Fewer, larger callbacks for big files; only a hint, so a refusal is not an error.
        _ = pk_curl_set_long(handle, CURLOPT_BUFFERSIZE, 512 * 1024)
        guard code == CURLE_OK else {
            return TransportFailure(kind: .other, detail: "libcurl option: \(describe(code))")
        }
        return nil
    }

    /// What changes per request; every such option is set each time, so nothing of the
    /// previous request (its headers, its compression) carries over.
    private func configure(
        _ request: HTTPRequest, headers: UnsafeMutablePointer<curl_slist>?,
        context: UnsafeMutableRawPointer
    ) -> TransportFailure? {
        var code = CURLE_OK
        func check(_ c: CURLcode) { if code == CURLE_OK { code = c } }
        check(pk_curl_set_str(handle, CURLOPT_URL, request.url))
        check(pk_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT, request.timeouts.connect))
        check(pk_curl_set_long(handle, CURLOPT_LOW_SPEED_TIME, request.timeouts.stall))
        check(pk_curl_set_slist(handle, CURLOPT_HTTPHEADER, headers))
        check(
            request.acceptCompression
                ? pk_curl_set_str(handle, CURLOPT_ACCEPT_ENCODING, "")
                : pk_curl_set_ptr(handle, CURLOPT_ACCEPT_ENCODING, nil))
        check(pk_curl_set_ptr(handle, CURLOPT_HEADERDATA, context))
        check(pk_curl_set_ptr(handle, CURLOPT_WRITEDATA, context))
        check(pk_curl_set_ptr(handle, CURLOPT_XFERINFODATA, context))
        check(pk_curl_set_ptr(handle, CURLOPT_READDATA, context))
        // The method and its body size, set every time: HTTPGET undoes a previous POST or PUT.
        let length = curl_off_t(request.body?.length ?? 0)
        switch request.method {
        case .get:
            check(pk_curl_set_long(handle, CURLOPT_HTTPGET, 1))
        case .post:
            check(pk_curl_set_long(handle, CURLOPT_POST, 1))
            check(pk_curl_set_off(handle, CURLOPT_POSTFIELDSIZE_LARGE, length))
        case .put:
            check(pk_curl_set_long(handle, CURLOPT_UPLOAD, 1))
            check(pk_curl_set_off(handle, CURLOPT_INFILESIZE_LARGE, length))
        }
        guard code == CURLE_OK else {
            return TransportFailure(kind: .other, detail: "libcurl option: \(describe(code))")
        }
        return nil
    }

    private func failure(_ code: CURLcode, context: TransferContext) -> TransportFailure {
        let detail = describe(code)
        switch code {
        case CURLE_WRITE_ERROR where context.receiverAborted:
            return TransportFailure(kind: .abortedByReceiver, detail: detail)
        case CURLE_ABORTED_BY_CALLBACK:
            return TransportFailure(kind: .cancelled, detail: detail)
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_CONNECT:
            return TransportFailure(kind: .connect, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return TransportFailure(kind: .timeout, detail: detail)
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING,
            CURLE_HTTP2, CURLE_HTTP2_STREAM:
            return TransportFailure(kind: .dropped, detail: detail)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM:
            return TransportFailure(kind: .tls, detail: detail)
        default:
            return TransportFailure(kind: .other, detail: detail)
        }
    }

    /// curl's one-line text for `code`, plus the error buffer's details when it has any.
    private func describe(_ code: CURLcode) -> String {
        let text = String(cString: curl_easy_strerror(code))
        let details = String(cString: errorBuffer)
        return details.isEmpty || details == text ? text : "\(text): \(details)"
    }
}

/// A transfer that produced no complete HTTP response.
struct TransportFailure: Error, Sendable, Equatable {
    enum Kind: Sendable, Equatable {
        /// No connection: DNS failure, refused, unreachable.
        case connect
        /// Nothing moved for the stall timeout, or the connection never completed.
        case timeout
        /// The connection broke in the middle of the response.
        case dropped
        case tls
        /// The receiver refused a chunk (its own reason is kept by the receiver).
        case abortedByReceiver
        /// The job was cancelled (its `CancellationToken`: Ctrl-C).
        case cancelled
        case other
    }
    var kind: Kind
    var detail: String

    /// Worth trying again after a pause.
    var isTransient: Bool { [.connect, .timeout, .dropped].contains(kind) }
}

/// Per-transfer state that the C callbacks reach through their `userdata` pointer.
private final class TransferContext {
    let receiver: HTTPResponseReceiver
    var head: HTTPResponseHead
    var headDelivered = false
    var receiverAborted = false
    var setupFailure: TransportFailure?
    /// The body of a POST or PUT, read by libcurl through `curlReadCallback`.
    var bodySource: RequestBodySource?
    let cancellation: CancellationToken?

    init(receiver: HTTPResponseReceiver, url: String, cancellation: CancellationToken?) {
        self.receiver = receiver
        self.cancellation = cancellation
        head = HTTPResponseHead(status: 0, headers: HTTPHeaders(), url: url)
    }

    /// A status line starts a new header block (after a `100 Continue` or a proxy's reply).
    func headerLine(_ line: Substring) {
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2)
            head.status = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
            head.headers = HTTPHeaders()
        } else {
            head.headers.add(line: line)
        }
    }

    func deliverHead() -> BodyDecision {
        headDelivered = true
        let decision = receiver.receive(head: head)
        if case .abort = decision { receiverAborted = true }
        return decision
    }

    func body(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if !headDelivered, case .abort = deliverHead() { return false }
        if case .abort = receiver.receive(body: bytes) {
            receiverAborted = true
            return false
        }
        return true
    }
}

// The C callbacks: plain functions (no captures) that find their context through userdata.

/// libcurl's header, write and read callbacks: (buffer, size, count, userdata) -> bytes.
private typealias CurlDataCallback =
    @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int

private let curlHeaderCallback: CurlDataCallback = { data, size, count, userdata in
        let length = size * count
        guard let data, let userdata else { return length }
        let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
        let bytes = UnsafeRawBufferPointer(start: data, count: length)
        context.headerLine(Substring(decoding: bytes, as: UTF8.self))
        return length
    }

private let curlWriteCallback: CurlDataCallback = { data, size, count, userdata in
        let length = size * count
        guard let data, let userdata else { return 0 }
        let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
        return context.body(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
    }

private let curlReadCallback: CurlDataCallback = { buffer, size, count, userdata in
        guard let buffer, let userdata else { return 0 }
        let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
        guard let source = context.bodySource else { return 0 }
        return source.read(into: UnsafeMutableRawPointer(buffer), capacity: size * count)
            ?? Int(CURL_READFUNC_ABORT)
    }

private let curlProgressCallback:
    @convention(c) (
        UnsafeMutableRawPointer?, curl_off_t, curl_off_t, curl_off_t, curl_off_t
    ) -> Int32 = { userdata, _, _, _, _ in
        guard let userdata else { return 0 }
        let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
        return context.cancellation.isCancelled ? 1 : 0
    }

/// Feeds a request body to libcurl, from memory or from a range of a file (read with pread,
/// so a multi-GB weight file is streamed, never loaded).
final class RequestBodySource {
    private let body: HTTPBody
    private var sent = 0
    private var descriptor: Int32 = -1

    init(_ body: HTTPBody) throws(TransportFailure) {
        self.body = body
        if case .fileRange(let path, _, _) = body {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                let reason = String(cString: strerror(errno))
                throw TransportFailure(kind: .other, detail: "cannot read \(path): \(reason)")
            }
        }
    }

    deinit { if descriptor >= 0 { close(descriptor) } }

    /// Copies the next bytes into `buffer`; 0 at the end, nil when the file cannot be read
    /// (it shrank or vanished during the upload: the transfer is aborted, never padded).
    func read(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int? {
        let count = min(capacity, body.length - sent)
        guard count > 0 else { return 0 }
        switch body {
        case .bytes(let bytes):
            bytes.withUnsafeBytes { source in
                buffer.copyMemory(from: source.baseAddress! + sent, byteCount: count)
            }
        case .fileRange(_, let offset, _):
            let got = pread(descriptor, buffer, count, off_t(offset + sent))
            guard got > 0 else { return nil }
            sent += got
            return got
        }
        sent += count
        return count
    }
}

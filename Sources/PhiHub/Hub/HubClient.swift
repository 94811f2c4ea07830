import Foundation
import PhiFormats

/// The Hub's HTTP API as phikit uses it: revision → commit, the file list of a commit, and
/// (in `HubClient+Download`) the bytes of one file. One client per thread: it owns a libcurl
/// handle, which keeps its connections open between requests.
final class HubClient {
    let configuration: HubConfiguration
    private let curl: CurlEasy
    private let endpointOrigin: URLOrigin?

    init(configuration: HubConfiguration) throws(HubError) {
        if let error = configuration.tokenFileError { throw .local(error) }
        self.configuration = configuration
        do {
            curl = try CurlEasy(userAgent: configuration.userAgent)
        } catch {
            throw .network(url: configuration.endpoint, detail: error.detail)
        }
        endpointOrigin = URLOrigin(configuration.endpoint)
    }

    /// Where the repo's page (and licence) is, for messages.
    func repoURL(_ repoID: String) -> String { configuration.endpoint + "/" + repoID }

    // MARK: API

    /// The commit `revision` (branch, tag or commit) points at:
    /// `GET /api/models/{repo}/revision/{revision}` → `sha`.
    func commit(repoID: String, revision: String) throws(HubError) -> String {
        let url =
            "\(configuration.endpoint)/api/models/\(repoID)/revision/"
            + URLPath.escapeSegment(revision)
        let json = try fetchJSON(url, context: .init(repoID: repoID, revision: revision))
        guard let sha = json["sha"]?.stringValue, HubCache.isCommitHash(sha) else {
            throw .badResponse(url: url, detail: "no 40-hex 'sha' in the revision info")
        }
        return sha
    }

    /// Every file of the repo at `commit`, following the `Link: <…>; rel="next"` pages:
    /// `GET /api/models/{repo}/tree/{commit}?recursive=true`.
    func listFiles(repoID: String, commit: String) throws(HubError) -> [HubFileEntry] {
        var next: String? =
            "\(configuration.endpoint)/api/models/\(repoID)/tree/\(commit)?recursive=true"
        var files: [HubFileEntry] = []
        var pages = 0
        // A next-page link that comes back round (to a page already read, or to pages that
        // list files already listed) ran for minutes until the page limit: stop at once.
        var visited = Set<String>()
        var paths = Set<String>()
        while let url = next {
            pages += 1
            guard pages <= 10_000 else { throw .badResponse(url: url, detail: "endless paging") }
            guard visited.insert(url).inserted else {
                throw .badResponse(url: url, detail: "the next-page links loop back to this page")
            }
            let (json, head) = try fetchJSONWithHead(
                url, context: .init(repoID: repoID, revision: commit))
            guard let items = json.arrayValue else {
                throw .badResponse(url: url, detail: "the tree is not a JSON list")
            }
            for item in items where item["type"]?.stringValue == "file" {
                let entry = try Self.fileEntry(item, url: url)
                guard paths.insert(entry.path).inserted else {
                    throw .badResponse(url: url, detail: "'\(entry.path)' is listed twice")
                }
                files.append(entry)
            }
            next = Self.nextPage(head.headers["Link"], base: url)
        }
        return files
    }

    /// One tree item, checked: the sizes and hashes decide where bytes go on disk.
    static func fileEntry(_ item: JSONValue, url: String) throws(HubError) -> HubFileEntry {
        guard let path = item["path"]?.stringValue, let size = item["size"]?.intValue, size >= 0,
            let oid = item["oid"]?.stringValue, isHex(oid, count: 40)
        else {
            throw .badResponse(url: url, detail: "a tree entry lacks path, size or oid")
        }
        var lfs: HubFileEntry.LFSObject?
        if let object = item["lfs"], !object.isNull {
            guard let sha = object["oid"]?.stringValue, isHex(sha, count: 64),
                let lfsSize = object["size"]?.intValue, lfsSize == size
            else {
                throw .badResponse(url: url, detail: "bad LFS info for '\(path)'")
            }
            lfs = .init(sha256: sha, size: lfsSize)
        }
        return HubFileEntry(
            path: path, size: size, blobID: oid, lfs: lfs, xetHash: item["xetHash"]?.stringValue)
    }

    /// The `rel="next"` target of a `Link` header, resolved against the current page.
    static func nextPage(_ link: String?, base: String) -> String? {
        guard let link else { return nil }
        for part in link.split(separator: ",") {
            let pieces = part.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let target = pieces.first, target.hasPrefix("<"), target.hasSuffix(">"),
                pieces.dropFirst().contains(where: { $0 == "rel=\"next\"" || $0 == "rel=next" })
            else { continue }
            return URLOrigin.resolve(location: String(target.dropFirst().dropLast()), against: base)
        }
        return nil
    }

    static func isHex(_ text: String, count: Int) -> Bool {
        text.utf8.count == count
            && text.utf8.allSatisfy { ($0 >= 48 && $0 <= 57) || ($0 >= 97 && $0 <= 102) }
    }

    // MARK: Requests

    /// Which repo, revision and file a request was about, to turn a status into the right error.
    struct Context {
        var repoID: String
        var revision: String
        var path: String?
    }

    private func fetchJSON(_ url: String, context: Context) throws(HubError) -> JSONValue {
        try fetchJSONWithHead(url, context: context).0
    }

    /// GET `url` with retries and redirects; parses the 200 body as JSON (at most 64 MB).
    private func fetchJSONWithHead(
        _ url: String, context: Context
    ) throws(HubError) -> (JSONValue, HTTPResponseHead) {
        var backoff = Backoff(configuration.retry)
        var current = url
        var redirects = 0
        while true {
            let collector = BodyCollector(limit: 64 << 20)
            let result = perform(HTTPRequest(url: current, acceptCompression: true), collector)
            let head: HTTPResponseHead
            switch result {
            case .success(let h): head = h
            case .failure(let failure):
                if collector.overflowed {
                    throw .badResponse(url: current, detail: "answer larger than 64 MB")
                }
                try wait(&backoff, after: failure, url: current, retryAfter: nil)
                continue
            }
            if (300..<400).contains(head.status), let location = head.headers["Location"] {
                redirects += 1
                guard redirects <= 10,
                    let target = URLOrigin.resolve(location: location, against: current)
                else { throw .badResponse(url: current, detail: "bad or endless redirects") }
                current = target
                continue
            }
            if head.status == 200 {
                do {
                    return (try JSONValue(parsing: collector.data), head)
                } catch {
                    throw .badResponse(url: current, detail: error.message)
                }
            }
            try retryOrThrow(head, &backoff, context: context)
        }
    }

    /// Sends one request, adding the token only for the endpoint's own origin.
    func perform(
        _ request: HTTPRequest, _ receiver: HTTPResponseReceiver
    ) -> Result<HTTPResponseHead, TransportFailure> {
        var request = request
        request.timeouts.stall = configuration.stallTimeout
        if let token = configuration.token, let origin = URLOrigin(request.url),
            origin == endpointOrigin
        {
            request.headers.append(("Authorization", "Bearer \(token.value)"))
        }
        return curl.perform(
            request, receiver: receiver, cancellation: configuration.cancellation)
    }

    /// Waits before the next try after a transport failure, or throws when tries are used up.
    func wait(
        _ backoff: inout Backoff, after failure: TransportFailure, url: String,
        retryAfter: Double?
    ) throws(HubError) {
        if failure.kind == .cancelled { throw .interrupted }
        // No connection at all (DNS, refused) rarely heals in seconds: three tries, not six.
        guard failure.isTransient, failure.kind != .connect || backoff.failures < 2 else {
            throw .network(url: url, detail: failure.detail)
        }
        switch backoff.next(retryAfter: retryAfter) {
        case .retry(let seconds): try sleep(seconds)
        case .giveUp, .waitTooLong: throw .network(url: url, detail: failure.detail)
        }
    }

    /// For a retryable status (408, 429, 5xx) waits and returns; otherwise throws the error the
    /// status means.
    func retryOrThrow(
        _ head: HTTPResponseHead, _ backoff: inout Backoff, context: Context
    ) throws(HubError) {
        let error = self.error(for: head, context: context)
        guard RetryPolicy.retryableStatuses.contains(head.status) else { throw error }
        let retryAfter = RetryPolicy.retryAfterSeconds(head.headers["Retry-After"])
        switch backoff.next(retryAfter: retryAfter) {
        case .retry(let seconds): try sleep(seconds)
        case .giveUp: throw error
        case .waitTooLong(let seconds): throw .rateLimited(url: head.url, retryAfter: seconds)
        }
    }

    private func sleep(_ seconds: Double) throws(HubError) {
        do { try Backoff.sleep(seconds, cancellation: configuration.cancellation) } catch {
            throw .interrupted
        }
    }

    /// The error a non-success status means, using the Hub's `X-Error-Code`.
    func error(for head: HTTPResponseHead, context: Context) -> HubError {
        let token = configuration.token?.source
        let endpoint = configuration.endpoint
        switch head.headers["X-Error-Code"] {
        case "RepoNotFound":
            return .repoNotFound(repoID: context.repoID, endpoint: endpoint, token: token)
        case "RevisionNotFound":
            return .revisionNotFound(repoID: context.repoID, revision: context.revision)
        case "EntryNotFound":
            return .entryNotFound(
                repoID: context.repoID, revision: context.revision, path: context.path ?? "")
        case "GatedRepo":
            return .gated(
                repoID: context.repoID, status: head.status, endpoint: endpoint, token: token)
        default: break
        }
        switch head.status {
        case 401:
            if let token, head.headers["X-Error-Message"]?.contains("Invalid credentials") == true {
                return .invalidToken(token: token)
            }
            return .gated(repoID: context.repoID, status: 401, endpoint: endpoint, token: token)
        case 403:
            return .gated(repoID: context.repoID, status: 403, endpoint: endpoint, token: token)
        case 404:
            if let path = context.path {
                return .entryNotFound(
                    repoID: context.repoID, revision: context.revision, path: path)
            }
            return .repoNotFound(repoID: context.repoID, endpoint: endpoint, token: token)
        case 429:
            return .rateLimited(
                url: head.url,
                retryAfter: RetryPolicy.retryAfterSeconds(head.headers["Retry-After"]))
        case 500..<600: return .serverError(status: head.status, url: head.url)
        default: return .unexpectedStatus(status: head.status, url: head.url)
        }
    }
}

/// Keeps a response body in memory, up to `limit` bytes (the rest is dropped and flagged).
final class BodyCollector: HTTPResponseReceiver {
    private(set) var data: [UInt8] = []
    private(set) var overflowed = false
    let limit: Int

    init(limit: Int) { self.limit = limit }

    func receive(head: HTTPResponseHead) -> BodyDecision { .proceed }

    func receive(body: UnsafeRawBufferPointer) -> BodyDecision {
        guard data.count + body.count <= limit else {
            overflowed = true
            return .abort
        }
        data.append(contentsOf: body)
        return .proceed
    }
}

import Foundation

/// The bytes of one file: `GET {endpoint}/{repo}/resolve/{commit}/{path}`, which answers 200
/// with the content of a small file, or 302 to a CDN for an LFS file, with the Hub's metadata
/// on that 302 (`X-Repo-Commit`, `X-Linked-Etag` = sha256, `X-Linked-Size`). phikit already
/// knows size and hash from the listing, so it skips huggingface_hub's HEAD request and checks
/// these headers on the way instead.
extension HubClient {
    enum FileFetch {
        /// A 200/206 response arrived whole (the writer may still hold fewer bytes than the
        /// file, if the server sent a short body).
        case complete
        case transport(TransportFailure)
        /// The final response was not a success (the status says why).
        case status(HTTPResponseHead)
        /// The Hub's headers contradict the listing, or redirects went wrong.
        case rejected(HubError)
    }

    func resolveURL(repoID: String, commit: String, path: String) -> String {
        "\(configuration.endpoint)/\(repoID)/resolve/\(commit)/\(URLPath.escapePath(path))"
    }

    /// One attempt: follows up to 10 redirects, resuming at `writer.written` with `Range`.
    /// The token goes only to the endpoint's origin (see `perform`): the CDN never sees it.
    func fetchFile(repoID: String, commit: String, writer: BlobWriter) -> FileFetch {
        var url = resolveURL(repoID: repoID, commit: commit, path: writer.entry.path)
        for _ in 0...10 {
            let offset = writer.written
            let request = HTTPRequest(url: url, rangeStart: offset > 0 ? offset : nil)
            let head: HTTPResponseHead
            switch perform(request, writer) {
            case .success(let h): head = h
            case .failure(let failure): return .transport(failure)
            }
            if let problem = checkHubHeaders(head, entry: writer.entry, commit: commit) {
                return .rejected(problem)
            }
            if (300..<400).contains(head.status) {
                guard let location = head.headers["Location"],
                    let target = URLOrigin.resolve(location: location, against: url)
                else {
                    return .rejected(
                        .badResponse(url: url, detail: "redirect without a usable Location"))
                }
                url = target
                continue
            }
            return head.status == 200 || head.status == 206 ? .complete : .status(head)
        }
        return .rejected(.badResponse(url: url, detail: "more than 10 redirects"))
    }

    /// The Hub's own headers, when present, must agree with the listing. Only responses from
    /// the endpoint are checked: a CDN's `ETag` means something else.
    private func checkHubHeaders(
        _ head: HTTPResponseHead, entry: HubFileEntry, commit: String
    ) -> HubError? {
        guard URLOrigin(head.url) == URLOrigin(configuration.endpoint),
            head.status < 400
        else { return nil }
        if let repoCommit = head.headers["X-Repo-Commit"], repoCommit != commit {
            return .inconsistentMetadata(
                path: entry.path, detail: "the Hub served commit \(repoCommit), not \(commit)")
        }
        if let size = head.headers["X-Linked-Size"].flatMap(Int.init), size != entry.size {
            return .inconsistentMetadata(
                path: entry.path,
                detail: "the Hub announces \(size) bytes, its file list \(entry.size)")
        }
        // X-Linked-Etag names the LFS object (its sha256); a plain ETag, the git blob.
        if let linked = Self.normalizedETag(head.headers["X-Linked-Etag"]),
            Self.isHex(linked, count: 64) || Self.isHex(linked, count: 40),
            linked != entry.blobName
        {
            return .inconsistentMetadata(
                path: entry.path,
                detail: "the Hub announces content \(linked), its file list \(entry.blobName)")
        }
        if entry.lfs == nil, let etag = Self.normalizedETag(head.headers["ETag"]),
            Self.isHex(etag, count: 40), etag != entry.blobID
        {
            return .inconsistentMetadata(
                path: entry.path,
                detail: "the Hub announces blob \(etag), its file list \(entry.blobID)")
        }
        return nil
    }

    /// `W/"abc"` or `"abc"` → `abc` (huggingface_hub's `_normalize_etag`).
    static func normalizedETag(_ value: String?) -> String? {
        guard var text = value?.trimmingCharacters(in: .whitespaces), !text.isEmpty else {
            return nil
        }
        if text.hasPrefix("W/") { text.removeFirst(2) }
        return text.trimmingCharacters(in: CharacterSet(charactersIn: "\""))
    }
}

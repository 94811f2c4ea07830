import Foundation
import PhiFormats

extension HubClient {
    /// The answer to one API call or upload: its head and (for API calls) its body.
    struct Answer {
        var head: HTTPResponseHead
        var body: [UInt8]

        func json(url: String) throws(HubError) -> JSONValue {
            do {
                return try JSONValue(parsing: body)
            } catch {
                throw .badResponse(url: url, detail: error.message)
            }
        }
    }

    /// Sends `request` as downloads are sent: transport failures and 408/429/5xx are retried
    /// with backoff (a body is read again from its source each time), 307/308 redirects are
    /// followed with the method and body kept — and the token only ever goes to the
    /// endpoint's own host (`perform`). Returns the answer when `accepted` says its status is
    /// an answer (2xx by default); otherwise throws the error the status means.
    func send(
        _ request: HTTPRequest, context: Context,
        accepted: (Int) -> Bool = { (200..<300).contains($0) }
    ) throws(HubError) -> Answer {
        var backoff = Backoff(configuration.retry)
        var current = request
        var redirects = 0
        while true {
            let collector = BodyCollector(limit: 16 << 20)
            let head: HTTPResponseHead
            switch perform(current, collector) {
            case .success(let h): head = h
            case .failure(let failure):
                if collector.overflowed {
                    throw .badResponse(url: current.url, detail: "answer larger than 16 MB")
                }
                try wait(&backoff, after: failure, url: current.url, retryAfter: nil)
                continue
            }
            if head.status == 307 || head.status == 308, let location = head.headers["Location"] {
                redirects += 1
                guard redirects <= 10,
                    let target = URLOrigin.resolve(location: location, against: current.url)
                else { throw .badResponse(url: current.url, detail: "bad or endless redirects") }
                current.url = target
                continue
            }
            if accepted(head.status) { return Answer(head: head, body: collector.data) }
            try retryOrThrow(head, &backoff, context: context)
        }
    }

    /// POSTs `json` to `url` (the Hub's API) and returns the answer.
    func postJSON(
        _ url: String, _ json: JSONValue, context: Context,
        contentType: String = "application/json",
        accepted: (Int) -> Bool = { (200..<300).contains($0) }
    ) throws(HubError) -> Answer {
        let request = HTTPRequest(
            url: url, method: .post, body: .bytes(Array(json.serialized().utf8)),
            headers: [("Content-Type", contentType), ("Accept", "application/json")],
            acceptCompression: true)
        return try send(request, context: context, accepted: accepted)
    }
}

import Foundation
import PhiFormats

/// One LFS object sent to the storage host the batch answer names: a single PUT (basic
/// transfer) or, when the answer carries `chunk_size`, one PUT per numbered part URL and a
/// completion call with the parts' ETags (the Hub's multipart transfer). The storage URLs are
/// presigned: the token goes only to the Hub itself (`HubClient.perform`).
struct LFSObjectUpload {
    let client: HubClient
    let file: UploadFile
    let context: HubClient.Context

    func run(
        upload: JSONValue, verify: JSONValue?, batchURL: String, progress: (Int) -> Void
    ) throws(HubError) {
        guard let href = upload["href"]?.stringValue else {
            throw .badResponse(url: batchURL, detail: "an upload action without href")
        }
        let header = upload["header"]
        if let chunkValue = header?["chunk_size"] {
            guard let chunkSize = chunkValue.intValue ?? chunkValue.stringValue.flatMap(Int.init),
                chunkSize > 0
            else { throw .badResponse(url: batchURL, detail: "a bad multipart chunk_size") }
            try multipart(header: header!, chunkSize: chunkSize, completion: href, progress)
        } else {
            _ = try client.send(
                HTTPRequest(
                    url: href, method: .put,
                    body: .fileRange(path: file.localPath, offset: 0, length: file.size)),
                context: context)
            progress(file.size)
        }
        if let verify, let verifyURL = verify["href"]?.stringValue {
            _ = try client.postJSON(
                verifyURL,
                .object([("oid", .string(file.sha256)), ("size", .int(file.size))]),
                context: context, contentType: "application/vnd.git-lfs+json")
        }
    }

    /// Parts are the header's numeric keys ("00001", "00002", …) in order; there must be
    /// exactly as many as `chunkSize` cuts the file into.
    private func multipart(
        header: JSONValue, chunkSize: Int, completion: String, _ progress: (Int) -> Void
    ) throws(HubError) {
        let parts = (header.objectValue ?? [])
            .compactMap { key, value -> (Int, String)? in
                guard !key.isEmpty, key.allSatisfy(\.isNumber), let number = Int(key),
                    let url = value.stringValue
                else { return nil }
                return (number, url)
            }
            .sorted { $0.0 < $1.0 }
        let expected = (file.size + chunkSize - 1) / chunkSize
        guard parts.count == expected else {
            throw .badResponse(
                url: completion,
                detail: "\(parts.count) part URLs for \(expected) parts of '\(file.path)'")
        }
        var etags: [JSONValue] = []
        for (index, part) in parts.enumerated() {
            let offset = index * chunkSize
            let length = min(chunkSize, file.size - offset)
            let answer = try client.send(
                HTTPRequest(
                    url: part.1, method: .put,
                    body: .fileRange(path: file.localPath, offset: offset, length: length)),
                context: context)
            guard let etag = answer.head.headers["ETag"], !etag.isEmpty else {
                throw .badResponse(url: part.1, detail: "part \(index + 1) came back without an ETag")
            }
            etags.append(.object([("partNumber", .int(index + 1)), ("etag", .string(etag))]))
            progress(offset + length)
        }
        _ = try client.postJSON(
            completion, .object([("oid", .string(file.sha256)), ("parts", .array(etags))]),
            context: context, contentType: "application/vnd.git-lfs+json")
    }
}

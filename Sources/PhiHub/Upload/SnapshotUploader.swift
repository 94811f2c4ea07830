import Foundation
import PhiFormats

/// What `pushFolder` is asked to do.
public struct PushRequest: Sendable {
    public var directory: String
    /// `org/name` on the Hub.
    public var repoID: String
    /// The branch the commit goes to; created from main when missing.
    public var revision: String
    /// Whether a repo that does not exist yet is created private.
    public var isPrivate: Bool
    /// The commit's summary line.
    public var message: String

    public init(
        directory: String, repoID: String, revision: String = "main", isPrivate: Bool = false,
        message: String? = nil
    ) {
        self.directory = directory
        self.repoID = repoID
        self.revision = revision
        self.isPrivate = isPrivate
        self.message = message ?? "Upload folder with phikit"
    }
}

/// What a push did, file by file.
public struct PushResult: Sendable, Encodable, Equatable {
    public var repoID: String
    public var revision: String
    /// The new commit; nil when the Hub already held every file as it is here.
    public var commit: String?
    public var commitURL: String?
    public var createdRepo: Bool
    public var createdBranch: Bool
    public var files: [PushedFile]
}

public struct PushedFile: Sendable, Encodable, Equatable {
    public enum Action: String, Sendable, Encodable {
        /// The bytes went to the Hub's storage (LFS).
        case uploaded
        /// The Hub's storage already held this object (a resumed push, a shared blob): only
        /// the commit names it.
        case present
        /// Sent inside the commit (small text files kept in git).
        case committed
        /// Identical to the file already at that path: not in the commit.
        case unchanged
        /// The Hub's pre-upload check said to leave it out (its .gitignore).
        case ignored
    }
    public var path: String
    public var size: Int
    public var action: Action
}

public enum PushProgress: Sendable {
    case hashing(path: String, index: Int, count: Int)
    case uploading(path: String, sent: Int, total: Int)
    case committing(files: Int)
}

/// Pushes every file of `request.directory` to the Hub in one commit, with the protocol
/// huggingface_hub's `upload_folder` speaks: create the repo (an existing one is fine), the
/// pre-upload check (which files go to LFS), the LFS batch (basic or multipart uploads, sent
/// straight to the storage host the Hub names — without the token), then one commit.
/// Each file is hashed once; files the Hub already has at that path are left out of the commit,
/// and objects its storage already holds are not sent again, so an interrupted push resumes.
public func pushFolder(
    _ request: PushRequest, configuration: HubConfiguration,
    progress: (PushProgress) -> Void = { _ in }
) throws(PushError) -> PushResult {
    guard configuration.token != nil else { throw .needsToken(repoID: request.repoID) }
    let files = try UploadFolder.files(in: request.directory) { path, index, count in
        progress(.hashing(path: path, index: index, count: count))
    }
    let uploader: SnapshotUploader
    do {
        uploader = SnapshotUploader(client: try HubClient(configuration: configuration), request)
    } catch {
        throw .hub(error)
    }
    return try uploader.push(files, progress: progress)
}

final class SnapshotUploader {
    private let client: HubClient
    private let request: PushRequest
    private var endpoint: String { client.configuration.endpoint }
    private var repoID: String { request.repoID }
    private var context: HubClient.Context { .init(repoID: repoID, revision: request.revision) }
    private var revisionSegment: String { URLPath.escapeSegment(request.revision) }

    init(client: HubClient, _ request: PushRequest) {
        self.client = client
        self.request = request
    }

    func push(
        _ files: [UploadFile], progress: (PushProgress) -> Void
    ) throws(PushError) -> PushResult {
        let createdRepo = try hub { () throws(HubError) in try createRepo() }
        var createdBranch = false
        var parent: String
        do {
            parent = try client.commit(repoID: repoID, revision: request.revision)
        } catch {
            guard case .revisionNotFound = error else { throw .hub(error) }
            parent = try hub { () throws(HubError) in
                try createBranch()
                return try client.commit(repoID: repoID, revision: request.revision)
            }
            createdBranch = true
        }
        var result = PushResult(
            repoID: repoID, revision: request.revision, commit: nil, commitURL: nil,
            createdRepo: createdRepo, createdBranch: createdBranch, files: [])
        // A commit that loses a race with another writer (or whose answer was lost after it
        // went through) is planned again against the new head: files that now match are
        // left out, and objects already uploaded are not sent again.
        for attempt in 0..<3 {
            let head = parent
            let remote = try hub { () throws(HubError) in
                try client.listFiles(repoID: repoID, commit: head)
            }
            let held = Dictionary(remote.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
            var actions: [String: PushedFile.Action] = [:]
            var changed: [UploadFile] = []
            for file in files {
                if Self.matches(file, held[file.path]) {
                    actions[file.path] = .unchanged
                } else {
                    changed.append(file)
                }
            }
            if !changed.isEmpty {
                let modes = try hub { () throws(HubError) in try preupload(changed) }
                let ignored = Set(modes.filter { $0.value.ignore }.map(\.key))
                for path in ignored { actions[path] = .ignored }
                let toCommit = changed.filter { !ignored.contains($0.path) }
                let lfs = toCommit.filter { modes[$0.path]?.lfs == true && $0.size > 0 }
                for (path, action) in try uploadObjects(lfs, progress: progress) {
                    actions[path] = action
                }
                for file in toCommit where actions[file.path] == nil {
                    actions[file.path] = .committed
                }
                if !toCommit.isEmpty {
                    progress(.committing(files: toCommit.count))
                    let lfsPaths = Set(lfs.map(\.path))
                    switch try commit(toCommit, lfs: lfsPaths, parent: parent) {
                    case .committed(let oid, let url):
                        result.commit = oid
                        result.commitURL = url
                    case .conflict:
                        guard attempt < 2 else {
                            throw .conflict(repoID: repoID, revision: request.revision)
                        }
                        parent = try hub { () throws(HubError) in
                            try client.commit(repoID: repoID, revision: request.revision)
                        }
                        continue
                    }
                }
            }
            if result.commit == nil && attempt > 0 {
                // The earlier commit went through although its answer said otherwise (or was
                // lost): the head now holds every file, and is this push's commit.
                result.commit = parent
            }
            result.files = files.map {
                PushedFile(path: $0.path, size: $0.size, action: actions[$0.path] ?? .unchanged)
            }
            return result
        }
        throw .conflict(repoID: repoID, revision: request.revision)
    }

    /// Runs a Hub call, its failure becoming the push's.
    private func hub<T>(_ body: () throws(HubError) -> T) throws(PushError) -> T {
        do {
            return try body()
        } catch {
            throw .hub(error)
        }
    }

    /// Whether the Hub's file at the same path has the same bytes.
    static func matches(_ file: UploadFile, _ remote: HubFileEntry?) -> Bool {
        guard let remote, remote.size == file.size else { return false }
        if let lfs = remote.lfs { return lfs.sha256 == file.sha256 }
        return remote.blobID == file.gitBlobSHA1
    }

    // MARK: The Hub's API

    /// `POST /api/repos/create`; true when it made the repo, false when it was there (409).
    private func createRepo() throws(HubError) -> Bool {
        let parts = repoID.split(separator: "/", maxSplits: 1).map(String.init)
        var body: [(key: String, value: JSONValue)] = [("name", .string(parts.last ?? repoID))]
        if parts.count == 2 { body.append(("organization", .string(parts[0]))) }
        body += [("private", .bool(request.isPrivate)), ("type", .string("model"))]
        let answer = try client.postJSON(
            endpoint + "/api/repos/create", .object(body), context: context,
            accepted: { (200..<300).contains($0) || $0 == 409 })
        return answer.head.status != 409
    }

    /// `POST /api/models/{repo}/branch/{branch}`: the branch, from main's head.
    private func createBranch() throws(HubError) {
        _ = try client.postJSON(
            "\(endpoint)/api/models/\(repoID)/branch/\(revisionSegment)", .object([]),
            context: context)
    }

    /// `POST /api/models/{repo}/preupload/{rev}`, 256 files a call: for each file whether it
    /// goes to LFS and whether the repo's .gitignore leaves it out.
    private func preupload(
        _ files: [UploadFile]
    ) throws(HubError) -> [String: (lfs: Bool, ignore: Bool)] {
        let url = "\(endpoint)/api/models/\(repoID)/preupload/\(revisionSegment)"
        var modes: [String: (lfs: Bool, ignore: Bool)] = [:]
        for start in stride(from: 0, to: files.count, by: 256) {
            let chunk = files[start..<min(files.count, start + 256)]
            let items: [JSONValue] = chunk.map {
                .object([
                    ("path", .string($0.path)),
                    ("sample", .string(Data($0.sample).base64EncodedString())),
                    ("size", .int($0.size)),
                ])
            }
            let json = try client.postJSON(url, .object([("files", .array(items))]), context: context)
                .json(url: url)
            for item in json["files"]?.arrayValue ?? [] {
                guard let path = item["path"]?.stringValue, let mode = item["uploadMode"]?.stringValue
                else { throw .badResponse(url: url, detail: "a pre-upload answer lacks path or uploadMode") }
                // "xet" repos take LFS uploads too when the client offers no xet transfer.
                modes[path] = (mode != "regular", item["shouldIgnore"]?.boolValue ?? false)
            }
            for file in chunk where modes[file.path] == nil {
                throw .badResponse(url: url, detail: "no pre-upload answer for '\(file.path)'")
            }
        }
        return modes
    }

    /// The LFS batch for `files`, then each object the storage lacks, uploaded whole (basic)
    /// or in the parts the Hub asks for (multipart), and verified when the Hub asks to be.
    private func uploadObjects(
        _ files: [UploadFile], progress: (PushProgress) -> Void
    ) throws(PushError) -> [String: PushedFile.Action] {
        let url = "\(endpoint)/\(repoID).git/info/lfs/objects/batch"
        var actions: [String: PushedFile.Action] = [:]
        for start in stride(from: 0, to: files.count, by: 100) {
            let chunk = Array(files[start..<min(files.count, start + 100)])
            let objects: [JSONValue] = chunk.map {
                .object([("oid", .string($0.sha256)), ("size", .int($0.size))])
            }
            let batch: JSONValue = .object([
                ("operation", .string("upload")),
                ("transfers", .array([.string("basic"), .string("multipart")])),
                ("objects", .array(objects)), ("hash_algo", .string("sha256")),
                ("ref", .object([("name", .string(request.revision))])),
            ])
            let json = try hub { () throws(HubError) in
                try client.postJSON(
                    url, batch, context: context, contentType: "application/vnd.git-lfs+json"
                ).json(url: url)
            }
            guard let answered = json["objects"]?.arrayValue else {
                throw .hub(.badResponse(url: url, detail: "the LFS batch answer has no objects"))
            }
            for file in chunk {
                guard let object = answered.first(where: { $0["oid"]?.stringValue == file.sha256 })
                else {
                    throw .hub(.badResponse(url: url, detail: "no LFS answer for '\(file.path)'"))
                }
                if let error = object["error"] {
                    throw .rejected(
                        path: file.path, detail: error["message"]?.stringValue ?? "LFS error")
                }
                guard let upload = object["actions"]?["upload"] else {
                    actions[file.path] = .present
                    continue
                }
                let verify = object["actions"]?["verify"]
                try hub { () throws(HubError) in
                    try LFSObjectUpload(client: client, file: file, context: context)
                        .run(upload: upload, verify: verify, batchURL: url) {
                            progress(.uploading(path: file.path, sent: $0, total: file.size))
                        }
                }
                actions[file.path] = .uploaded
            }
        }
        return actions
    }

    private enum CommitOutcome {
        case committed(oid: String, url: String?)
        case conflict
    }

    /// `POST /api/models/{repo}/commit/{rev}` (ndjson: a header, then one line per file —
    /// small files inline in base64, LFS files by oid), on top of `parent`.
    private func commit(
        _ files: [UploadFile], lfs: Set<String>, parent: String
    ) throws(PushError) -> CommitOutcome {
        let url = "\(endpoint)/api/models/\(repoID)/commit/\(revisionSegment)"
        var lines: [JSONValue] = [
            .object([
                ("key", .string("header")),
                (
                    "value",
                    .object([
                        ("summary", .string(request.message)), ("description", .string("")),
                        ("parentCommit", .string(parent)),
                    ])
                ),
            ])
        ]
        for file in files {
            if lfs.contains(file.path) {
                lines.append(
                    .object([
                        ("key", .string("lfsFile")),
                        (
                            "value",
                            .object([
                                ("path", .string(file.path)), ("algo", .string("sha256")),
                                ("oid", .string(file.sha256)), ("size", .int(file.size)),
                            ])
                        ),
                    ]))
            } else {
                let bytes: [UInt8]
                do {
                    bytes = try LocalFile.read(file.localPath)
                } catch {
                    throw .local(error)
                }
                guard bytes.count == file.size else {
                    throw .changedDuringPush(path: file.localPath)
                }
                lines.append(
                    .object([
                        ("key", .string("file")),
                        (
                            "value",
                            .object([
                                ("content", .string(Data(bytes).base64EncodedString())),
                                ("path", .string(file.path)), ("encoding", .string("base64")),
                            ])
                        ),
                    ]))
            }
        }
        let body = lines.map { $0.serialized() + "\n" }.joined()
        let request = HTTPRequest(
            url: url, method: .post, body: .bytes(Array(body.utf8)),
            headers: [("Content-Type", "application/x-ndjson")], acceptCompression: true)
        let answer = try hub { () throws(HubError) in
            try client.send(
                request, context: context,
                accepted: { (200..<300).contains($0) || $0 == 409 || $0 == 412 })
        }
        if answer.head.status == 409 || answer.head.status == 412 { return .conflict }
        let json = try hub { () throws(HubError) in try answer.json(url: url) }
        guard let oid = json["commitOid"]?.stringValue, HubClient.isHex(oid, count: 40) else {
            throw .hub(.badResponse(url: url, detail: "the commit answer has no commitOid"))
        }
        return .committed(oid: oid, url: json["commitUrl"]?.stringValue)
    }
}

import Foundation

/// Runs Tests/PhiHubTests/Server/hub_server.py (Python standard library only) on 127.0.0.1 with a free port for
/// one test, serving the repos given here; its CDN listener is on 127.0.0.2 (another host) when
/// that address can be bound. Faults are set by rewriting a JSON file the server re-reads; every
/// request is logged (method, path, Range, whether a token came) for the test to check.
public final class HubTestServer {
    public struct File: Sendable {
        public var path: String
        public var bytes: [UInt8]
        public var lfs = false

        public init(path: String, bytes: [UInt8], lfs: Bool = false) {
            self.path = path
            self.bytes = bytes
            self.lfs = lfs
        }
    }

    public struct Repo: Sendable {
        public var id: String
        public var refs: [String: String]
        public var commits: [String: [File]]
        public var gatedToken: String?
        public var isPrivate = false

        public init(
            id: String, refs: [String: String], commits: [String: [File]],
            gatedToken: String? = nil, isPrivate: Bool = false
        ) {
            self.id = id
            self.refs = refs
            self.commits = commits
            self.gatedToken = gatedToken
            self.isPrivate = isPrivate
        }
    }

    public struct Request: Decodable, Sendable {
        public var id: Int
        public var phase: String
        public var server: String
        public var method: String
        public var path: String
        public var range: String?
        public var auth: Bool
        public var status: Int
        public var bytes: Int
        public var t: Double
    }

    public let endpoint: String
    public let cdn: String
    public let directory: String
    private let process: Process
    private let input: Pipe

    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("PhiHubTests/Server/hub_server.py")
        .path

    /// `multipartChunk`: LFS objects larger than this are uploaded in parts of this size
    /// (the Hub's multipart transfer); nil: every object in one PUT.
    public init(repos: [Repo], pageSize: Int = 1000, multipartChunk: Int? = nil) throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-hub-server-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        var specRepos: [[String: Any]] = []
        for repo in repos {
            var commits: [String: Any] = [:]
            for (commit, files) in repo.commits {
                commits[commit] = [
                    "files": try files.enumerated().map { index, file -> [String: Any] in
                        let source =
                            directory
                            + "/src-\(repo.id.replacingOccurrences(of: "/", with: "_"))"
                            + "-\(commit.prefix(8))-\(index)"
                        try Data(file.bytes).write(to: URL(fileURLWithPath: source))
                        return ["path": file.path, "source": source, "lfs": file.lfs]
                    }
                ]
            }
            var spec: [String: Any] = [
                "id": repo.id, "refs": repo.refs, "commits": commits, "private": repo.isPrivate,
            ]
            if let token = repo.gatedToken { spec["gated_token"] = token }
            specRepos.append(spec)
        }
        var specObject: [String: Any] = ["page_size": pageSize, "repos": specRepos]
        if let multipartChunk { specObject["multipart_chunk"] = multipartChunk }
        let spec = try JSONSerialization.data(withJSONObject: specObject)
        try spec.write(to: URL(fileURLWithPath: directory + "/spec.json"))
        try Data("[]".utf8).write(to: URL(fileURLWithPath: directory + "/faults.json"))

        process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.script, "--spec", directory + "/spec.json", "--faults",
            directory + "/faults.json", "--log", directory + "/log.jsonl",
        ]
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        try process.run()
        let ready = try Self.readLine(output.fileHandleForReading)
        let urls = try JSONSerialization.jsonObject(with: Data(ready.utf8)) as? [String: String]
        guard let hub = urls?["hub"], let cdn = urls?["cdn"] else {
            throw ServerError(message: "hub_server.py said: \(ready)")
        }
        endpoint = hub
        self.cdn = cdn
    }

    deinit {
        try? input.fileHandleForWriting.close()  // the server exits when its stdin closes
        process.terminate()
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Replaces the fault list (JSON array, see hub_server.py); counters start over.
    public func setFaults(_ json: String) throws {
        // A new file (not an in-place write) so the server sees a new mtime even within a tick.
        let path = directory + "/faults.json"
        try Data(json.utf8).write(to: URL(fileURLWithPath: path + ".new"))
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.moveItem(atPath: path + ".new", toPath: path)
    }

    /// The answered requests in arrival order, once every request that arrived is answered
    /// (the server logs an answer after sending it; waits at most 5 s for stragglers).
    public var requests: [Request] {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let text =
                FileManager.default.contents(atPath: directory + "/log.jsonl")
                .map { String(decoding: $0, as: UTF8.self) } ?? ""
            let lines = text.split(separator: "\n")
            let starts = lines.filter { $0.contains(#""phase": "start""#) }.count
            let ends = lines.compactMap {
                try? JSONDecoder().decode(Request.self, from: Data($0.utf8))
            }
            if ends.count >= starts || Date() > deadline { return ends.sorted { $0.id < $1.id } }
            Thread.sleep(forTimeInterval: 0.01)
        }
    }

    /// Forgets the requests so far, once each has been answered and logged (the server logs
    /// an answer after sending it, so a client can be done before its last line is written).
    public func clearLog() {
        _ = requests
        try? FileManager.default.removeItem(atPath: directory + "/log.jsonl")
    }

    /// Requests for file bytes (resolve or CDN), as opposed to API calls.
    public var fileRequests: [Request] {
        requests.filter { $0.path.contains("/resolve/") || $0.server == "cdn" }
    }

    private static func readLine(_ handle: FileHandle) throws -> String {
        var data = Data()
        while !data.contains(UInt8(ascii: "\n")) {
            let chunk = handle.availableData
            guard !chunk.isEmpty else { throw ServerError(message: "hub_server.py exited") }
            data.append(chunk)
        }
        return String(decoding: data.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    public struct ServerError: Error, CustomStringConvertible {
        public var message: String
        public var description: String { message }
    }
}

/// The repo most tests pull: three small JSON files (one in a folder) and one LFS weight file,
/// whose hashes were computed with Python's hashlib (git blob sha1, sha256).
public enum Fixture {
    public static let repoID = "org/model"
    public static let commit = String(repeating: "c", count: 40)
    public static let config = Array(#"{"model_type": "phi3"}"#.utf8)
    public static let tokenizer = Array(#"{"version": "1.0"}"#.utf8)
    public static let weights: [UInt8] = (0..<1_000_000).map { UInt8(($0 * 31 + 7) % 251) }
    public static let configBlob = "d819ed66b72ceff70f6c646e22edfa1065d6e399"
    public static let tokenizerBlob = "fdef94443aef6c464d438c4654540cb4245f8f1e"
    public static let extraBlob = "9e26dfeeb6e641a33dae4961196235bdb965b21b"
    public static let readmeBlob = "e339422d0f5def57816b7df65a4fd8979edc765d"
    public static let weightsSHA256 = "03e13961ed7fa418171dcd51141cf32b71b1baee49433b42aea7764eccfc0405"
    public static let weightsPointerBlob = "3c341b1a0b31476fe8e3dfbcf55d260bd6d5cd3a"

    public static var files: [HubTestServer.File] {
        [
            .init(path: "config.json", bytes: config),
            .init(path: "tokenizer.json", bytes: tokenizer),
            .init(path: "sub/extra.json", bytes: Array("{}".utf8)),
            .init(path: "README.md", bytes: Array("# model\n".utf8)),
            .init(path: "model.safetensors", bytes: weights, lfs: true),
        ]
    }

    public static func repo(
        id: String = repoID, gatedToken: String? = nil, isPrivate: Bool = false
    ) -> HubTestServer.Repo {
        .init(
            id: id, refs: ["main": commit], commits: [commit: files], gatedToken: gatedToken,
            isPrivate: isPrivate)
    }
}

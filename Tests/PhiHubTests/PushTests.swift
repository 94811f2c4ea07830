import Foundation
import HubTestSupport
import PhiFormats
import Testing

@testable import PhiHub

/// A model folder, the Hub look-alike with its write side (hub_upload.py), and a pull that
/// reads back what the Hub holds after a push.
private struct PushHarness {
    let server: HubTestServer
    let folder: String
    var configuration: HubConfiguration
    static let weights: [UInt8] = (0..<700_000).map { UInt8(truncatingIfNeeded: $0 &* 2654435761 >> 11) }
    static let config = Array(#"{"model_type": "phi3"}"#.utf8)

    init(multipartChunk: Int? = 256 << 10, repos: [HubTestServer.Repo] = []) throws {
        server = try HubTestServer(repos: repos, multipartChunk: multipartChunk)
        folder = server.directory + "/model"
        try FileManager.default.createDirectory(
            atPath: folder + "/sub", withIntermediateDirectories: true)
        try Data(Self.weights).write(to: URL(fileURLWithPath: folder + "/model.safetensors"))
        try Data(Self.config).write(to: URL(fileURLWithPath: folder + "/config.json"))
        try Data("{}".utf8).write(to: URL(fileURLWithPath: folder + "/sub/extra.json"))
        try Data("secret".utf8).write(to: URL(fileURLWithPath: folder + "/.hidden"))
        configuration = HubConfiguration(
            endpoint: server.endpoint, token: HubToken("hf_write_token", source: .commandLine),
            retry: RetryPolicy(maxAttempts: 4, baseDelay: 0.01, maxRetryAfter: 3),
            stallTimeout: 5)
    }

    func push(
        _ repoID: String = "me/model", revision: String = "main"
    ) throws(PushError) -> PushResult {
        try pushFolder(
            PushRequest(directory: folder, repoID: repoID, revision: revision),
            configuration: configuration)
    }

    /// Every file of the repo at `revision`, downloaded through the pull path.
    func pulled(_ repoID: String = "me/model", revision: String = "main") throws -> [String: [UInt8]] {
        let cache = HubCache(root: server.directory + "/cache-\(UUID().uuidString)")
        let downloader = SnapshotDownloader(configuration: configuration, cache: cache, lockTimeout: 5)
        let plan = try downloader.plan(
            repoID: repoID, revision: revision, patterns: FilePatterns(include: ["*"]))
        let result = try downloader.download(plan, jobs: 2)
        var files: [String: [UInt8]] = [:]
        for file in plan.files {
            files[file.entry.path] = FileManager.default.contents(
                atPath: result.snapshotDirectory + "/" + file.entry.path).map(Array.init)
        }
        return files
    }

    var uploads: [HubTestServer.Request] {
        server.requests.filter { $0.server == "cdn" && $0.method == "PUT" }
    }
}

@Suite("Push to the Hub")
struct PushTests {
    @Test("a new repo gets every file in one commit; multipart parts go to storage without the token")
    func pushNewRepo() throws {
        let h = try PushHarness()
        let result = try h.push()
        #expect(result.createdRepo && !result.createdBranch && result.commit != nil)
        #expect(result.files.map(\.path) == ["config.json", "model.safetensors", "sub/extra.json"])
        #expect(result.files.first { $0.path == "model.safetensors" }?.action == .uploaded)
        #expect(result.files.first { $0.path == "config.json" }?.action == .committed)
        // 700,000 bytes in 256 KiB parts: three PUTs to the storage host, none with the token.
        #expect(h.uploads.count == 3)
        #expect(!h.server.requests.contains { $0.server == "cdn" && $0.auth })
        #expect(h.server.requests.filter { $0.path.hasSuffix("/commit/main") }.count == 1)
        let files = try h.pulled()
        #expect(files["model.safetensors"] == PushHarness.weights)
        #expect(files["config.json"] == PushHarness.config)
        #expect(files["sub/extra.json"] == Array("{}".utf8))
        #expect(files[".hidden"] == nil)
    }

    @Test("pushing the same folder again sends nothing and makes no commit")
    func secondPushIsUpToDate() throws {
        let h = try PushHarness()
        _ = try h.push()
        h.server.clearLog()
        let again = try h.push()
        #expect(again.commit == nil && !again.createdRepo)
        #expect(again.files.allSatisfy { $0.action == .unchanged })
        #expect(h.uploads.isEmpty)
        #expect(!h.server.requests.contains { $0.path.contains("/commit/") })
    }

    @Test(
        "a 503 or 429 on each step is retried and the push completes",
        arguments: ["/api/repos/create", "/preupload/", "/objects/batch", "/upload/", "/lfs-complete/",
                    "/lfs-verify/", "/commit/"])
    func transientStatusOnEachStep(_ path: String) throws {
        let h = try PushHarness()
        let status = path == "/upload/" ? 429 : 503
        try h.server.setFaults(
            #"[{"kind": "status", "status": \#(status), "path": "\#(path)", "times": 1, "retry_after": "0"}]"#)
        let result = try h.push()
        #expect(result.commit != nil)
        #expect(try h.pulled()["model.safetensors"] == PushHarness.weights)
    }

    @Test("a connection dropped in the middle of a part is retried with the same bytes")
    func droppedPart() throws {
        let h = try PushHarness()
        try h.server.setFaults(#"[{"kind": "drop", "path": "/upload/", "after": 100000, "times": 1}]"#)
        _ = try h.push()
        #expect(h.uploads.count == 4)
        #expect(try h.pulled()["model.safetensors"] == PushHarness.weights)
    }

    @Test("an interrupted push resumes: objects the storage holds are not sent again")
    func resumeAfterFailedCommit() throws {
        var h = try PushHarness(multipartChunk: nil)
        h.configuration.retry.maxAttempts = 2
        try h.server.setFaults(#"[{"kind": "status", "status": 500, "path": "/commit/"}]"#)
        let error = #expect(throws: PushError.self) { try h.push() }
        guard case .hub(.serverError(500, _))? = error else {
            return #expect(Bool(false), "wrong error: \(String(describing: error))")
        }
        #expect(error?.exitCode == .unavailable)
        #expect(error?.hint?.contains("push again") == true)
        #expect(h.uploads.count == 1)
        try h.server.setFaults("[]")
        h.server.clearLog()
        let result = try h.push()
        #expect(result.files.first { $0.path == "model.safetensors" }?.action == .present)
        #expect(h.uploads.isEmpty)
        #expect(try h.pulled()["model.safetensors"] == PushHarness.weights)
    }

    @Test("a commit that loses a race is planned again on the new head; a lasting race is an error")
    func commitConflict() throws {
        let h = try PushHarness()
        try h.server.setFaults(#"[{"kind": "status", "status": 412, "path": "/commit/", "times": 1}]"#)
        #expect(try h.push().commit != nil)
        let other = try PushHarness()
        try other.server.setFaults(#"[{"kind": "status", "status": 412, "path": "/commit/"}]"#)
        let error = #expect(throws: PushError.self) { try other.push() }
        #expect(error == .conflict(repoID: "me/model", revision: "main"))
    }

    @Test("a missing branch is created from main; files changed since are the only ones sent")
    func branchAndChangedFile() throws {
        let h = try PushHarness()
        _ = try h.push()
        try Data(#"{"model_type": "phi3", "x": 1}"#.utf8).write(
            to: URL(fileURLWithPath: h.folder + "/config.json"))
        h.server.clearLog()
        let result = try h.push(revision: "dev")
        #expect(result.createdBranch)
        #expect(result.files.map(\.action) == [.committed, .unchanged, .unchanged])
        #expect(h.uploads.isEmpty)
        #expect(try h.pulled(revision: "dev")["config.json"] == Array(#"{"model_type": "phi3", "x": 1}"#.utf8))
        #expect(try h.pulled(revision: "main")["config.json"] == PushHarness.config)
    }

    @Test("no token: refused before any request; a read-only token: the Hub's 403 is said")
    func tokens() throws {
        var h = try PushHarness()
        h.configuration.token = nil
        #expect(throws: PushError.needsToken(repoID: "me/model")) { try h.push() }
        #expect(h.server.requests.isEmpty)
        h.configuration.token = HubToken("hf_read_only", source: .environment("HF_TOKEN"))
        let error = #expect(throws: PushError.self) { try h.push() }
        guard case .hub(.gated(_, 403, _, _))? = error else {
            return #expect(Bool(false), "wrong error: \(String(describing: error))")
        }
        #expect(!(error?.message.contains("hf_read_only") ?? true))
    }

    @Test("an empty folder or a file path is refused before the Hub is asked")
    func badFolders() throws {
        let h = try PushHarness()
        let empty = h.server.directory + "/empty"
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        #expect(throws: PushError.emptyFolder(path: empty)) {
            try pushFolder(PushRequest(directory: empty, repoID: "me/x"), configuration: h.configuration)
        }
        let file = h.folder + "/config.json"
        #expect(throws: PushError.notADirectory(path: file)) {
            try pushFolder(PushRequest(directory: file, repoID: "me/x"), configuration: h.configuration)
        }
        #expect(h.server.requests.isEmpty)
    }
}

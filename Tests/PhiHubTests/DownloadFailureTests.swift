import Foundation
import HubTestSupport
import PhiFormats
import Testing

@testable import PhiHub

/// What huggingface_hub 2.4 gets wrong, and phikit must not: a file whose bytes do not match
/// the announced sha256 is refused (not stored under that name), a cut transfer resumes from
/// the exact byte (not the last 10 MiB chunk), and a 503/429 on a file is retried.
@Suite("Download failures")
struct DownloadFailureTests {
    @Test("bytes that do not match the announced sha256 are refused; nothing is stored")
    func corruptFileIsRefused() throws {
        let h = try PullHarness()
        try h.server.setFaults(#"[{"kind": "corrupt", "path": "/lfs/"}]"#)
        let error = #expect(throws: HubError.self) { try h.pull() }
        guard case .hashMismatch("model.safetensors", "sha256", Fixture.weightsSHA256, _)? = error
        else { return #expect(Bool(false), "wrong error: \(String(describing: error))") }
        #expect(error?.exitCode == .dataError)
        // Neither the blob nor its partial nor a snapshot link; and main does not point here.
        #expect(!h.names("blobs").contains { $0.hasPrefix(Fixture.weightsSHA256) })
        #expect(!h.names("snapshots/" + Fixture.commit).contains("model.safetensors"))
        #expect(h.contents("refs/main") == nil)
    }

    @Test(
        "resolve headers that contradict the file list are refused (exit 65)",
        arguments: [
            ("X-Repo-Commit", "0123456789012345678901234567890123456789", "served commit"),
            ("X-Linked-Size", "5", "announces 5 bytes"),
            ("X-Linked-Etag", "\"\(String(repeating: "f", count: 64))\"", "announces content"),
        ])
    func contradictingHeaders(_ name: String, _ value: String, _ detail: String) throws {
        let h = try PullHarness()
        let escaped = value.replacingOccurrences(of: "\"", with: "\\\"")
        try h.server.setFaults(
            #"[{"kind": "header", "path": "model.safetensors", "name": "\#(name)", "#
                + #""value": "\#(escaped)"}]"#)
        let error = #expect(throws: HubError.self) { try h.pull() }
        guard case .inconsistentMetadata("model.safetensors", let text)? = error else {
            return #expect(Bool(false), "wrong error: \(String(describing: error))")
        }
        #expect(text.contains(detail))
        #expect(error?.exitCode == .dataError)
        #expect(!h.server.requests.contains { $0.server == "cdn" })
    }

    @Test("a connection cut mid-file resumes from the exact byte with a Range request")
    func dropResumesInTheSameRun() throws {
        let h = try PullHarness()
        try h.server.setFaults(#"[{"kind": "drop", "path": "/lfs/", "after": 123457, "times": 1}]"#)
        let result = try h.pull()
        let cdn = h.server.requests.filter { $0.server == "cdn" }
        #expect(cdn.map(\.range) == [nil, "bytes=123457-"])
        #expect(cdn.map(\.bytes) == [123_457, 1_000_000 - 123_457])
        #expect(h.contents("blobs/" + Fixture.weightsSHA256) == Fixture.weights)
        #expect(result.files.first { $0.path == "model.safetensors" }?.bytesDownloaded == 1_000_000)
    }

    @Test("a large file (hashed on its own thread) survives a cut and a server ignoring Range")
    func largeFile() throws {
        let big: [UInt8] = (0..<(9 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 40503 >> 7) }
        let repo = HubTestServer.Repo(
            id: Fixture.repoID, refs: ["main": Fixture.commit],
            commits: [Fixture.commit: [.init(path: "model.safetensors", bytes: big, lfs: true)]])
        var h = try PullHarness(repos: [repo])
        h.configuration.retry.maxAttempts = 1
        try h.server.setFaults(#"[{"kind": "drop", "path": "/lfs/", "after": 5000000}]"#)
        #expect(throws: HubError.self) { try h.pull() }
        try h.server.setFaults(
            #"[{"kind": "drop", "path": "/lfs/", "after": 2000000, "times": 1}, "#
                + #"{"kind": "ignore_range", "path": "/lfs/"}]"#)
        h.configuration.retry.maxAttempts = 3
        let result = try h.pull()
        #expect(h.server.requests.filter { $0.server == "cdn" }.map(\.range).count == 3)
        let sha = SHA256Hasher.hex(of: big)
        #expect(h.contents("blobs/" + sha) == big)
        // The 2 MB before the cut, then the whole file again (the server ignored the Range).
        #expect(result.files[0].bytesDownloaded == 2_000_000 + big.count)
    }

    @Test("a transfer that stalls is abandoned after the stall timeout and resumed")
    func stall() throws {
        var h = try PullHarness()
        h.configuration.stallTimeout = 1
        try h.server.setFaults(
            #"[{"kind": "stall", "path": "/lfs/", "after": 300000, "times": 1, "seconds": 3}]"#)
        let start = Date()
        _ = try h.pull()
        #expect(Date().timeIntervalSince(start) < 15)
        let cdn = h.server.requests.filter { $0.server == "cdn" }
        #expect(cdn.last?.range == "bytes=300000-")
        #expect(h.contents("blobs/" + Fixture.weightsSHA256) == Fixture.weights)
    }

    @Test("a partial left by a failed run is resumed by the next run, hashed first")
    func resumeAcrossRuns() throws {
        var h = try PullHarness()
        h.configuration.retry.maxAttempts = 1  // give up at the first cut
        try h.server.setFaults(#"[{"kind": "drop", "path": "/lfs/", "after": 400000}]"#)
        #expect(throws: HubError.self) { try h.pull() }
        let partial = h.cache.partialPath(repoID: Fixture.repoID, blobName: Fixture.weightsSHA256)
        let size = try FileManager.default.attributesOfItem(atPath: partial)[.size] as? NSNumber
        #expect(size?.intValue == 400_000)
        #expect(h.contents("refs/main") == nil)

        try h.server.setFaults("[]")
        h.server.clearLog()
        let result = try h.pull()
        #expect(h.server.requests.filter { $0.server == "cdn" }.map(\.range) == ["bytes=400000-"])
        let weights = try #require(result.files.first { $0.path == "model.safetensors" })
        #expect(weights.resumedFrom == 400_000)
        #expect(weights.bytesDownloaded == 600_000)
        #expect(h.contents("blobs/" + Fixture.weightsSHA256) == Fixture.weights)
    }

    @Test("a server that ignores Range sends the whole file again; the partial restarts")
    func ignoredRangeRestarts() throws {
        var h = try PullHarness()
        h.configuration.retry.maxAttempts = 1
        try h.server.setFaults(#"[{"kind": "drop", "path": "/lfs/", "after": 300000}]"#)
        #expect(throws: HubError.self) { try h.pull() }
        try h.server.setFaults(#"[{"kind": "ignore_range", "path": "/lfs/"}]"#)
        _ = try h.pull()
        #expect(h.contents("blobs/" + Fixture.weightsSHA256) == Fixture.weights)
    }

    @Test("503 and 429 on a file are retried; Retry-After is honoured")
    func retriesServerErrors() throws {
        let h = try PullHarness()
        try h.server.setFaults(
            #"""
            [{"kind": "status", "status": 503, "path": "config.json", "times": 2},
             {"kind": "status", "status": 429, "retry_after": "1", "path": "/lfs/", "times": 1}]
            """#)
        _ = try h.pull()
        let config = h.server.requests.filter { $0.path.hasSuffix("/config.json") }
        #expect(config.map(\.status) == [503, 503, 200])
        let cdn = h.server.requests.filter { $0.server == "cdn" }
        #expect(cdn.map(\.status) == [429, 200])
        #expect(cdn[1].t - cdn[0].t >= 0.95)  // waited the second the server asked for
    }

    @Test("a Retry-After longer than the cap, or errors that persist, fail with their cause")
    func retriesGiveUp() throws {
        let h = try PullHarness()
        try h.server.setFaults(
            #"[{"kind": "status", "status": 429, "retry_after": "3600", "path": "config.json"}]"#)
        let only = FilePatterns(include: ["config.json"])
        let limited = #expect(throws: HubError.self) { try h.pull(patterns: only) }
        guard case .rateLimited(_, 3600)? = limited else {
            return #expect(Bool(false), "wrong error: \(String(describing: limited))")
        }
        try h.server.setFaults(#"[{"kind": "status", "status": 500, "path": "config.json"}]"#)
        h.server.clearLog()
        let failed = #expect(throws: HubError.self) { try h.pull(patterns: only) }
        guard case .serverError(500, _)? = failed else {
            return #expect(Bool(false), "wrong error: \(String(describing: failed))")
        }
        #expect(h.server.requests.filter { $0.status == 500 }.count == 4)  // maxAttempts
    }

    @Test("not found: repo, revision and file, each its own error (exit 66)")
    func notFound() throws {
        let h = try PullHarness()
        #expect(
            throws: HubError.repoNotFound(
                repoID: "org/none", endpoint: h.server.endpoint, token: nil)
        ) {
            try h.pull("org/none")
        }
        #expect(throws: HubError.revisionNotFound(repoID: Fixture.repoID, revision: "v9")) {
            try h.pull(revision: "v9")
        }
        try h.server.setFaults(
            #"[{"kind": "status", "status": 404, "error_code": "EntryNotFound", "#
                + #""path": "tokenizer.json"}]"#
        )
        #expect(
            throws: HubError.entryNotFound(
                repoID: Fixture.repoID, revision: Fixture.commit, path: "tokenizer.json")
        ) {
            try h.pull()
        }
        #expect(HubError.revisionNotFound(repoID: "a/b", revision: "x").exitCode == .noInput)
    }

    @Test("gated and private repos say whether a token was sent and where it came from")
    func gatedAndTokens() throws {
        var h = try PullHarness(repos: [
            Fixture.repo(gatedToken: "hf_right"),
            Fixture.repo(id: "org/private", gatedToken: "hf_right", isPrivate: true),
        ])
        #expect(
            throws: HubError.gated(
                repoID: Fixture.repoID, status: 401, endpoint: h.server.endpoint, token: nil)
        ) {
            try h.pull()
        }
        h.configuration.token = HubToken("hf_wrong", source: .environment("HF_TOKEN"))
        let denied = HubError.gated(
            repoID: Fixture.repoID, status: 403, endpoint: h.server.endpoint,
            token: .environment("HF_TOKEN"))
        #expect(throws: denied) { try h.pull() }
        #expect(denied.message.contains("with the token from HF_TOKEN"))
        #expect(!denied.message.contains("hf_wrong") && !(denied.hint ?? "").contains("hf_wrong"))
        #expect(denied.exitCode == .unavailable)
        h.configuration.token = HubToken("hf_invalid_x", source: .commandLine)
        #expect(throws: HubError.invalidToken(token: .commandLine)) { try h.pull() }
        h.configuration.token = nil
        #expect(
            throws: HubError.repoNotFound(
                repoID: "org/private", endpoint: h.server.endpoint, token: nil)
        ) {
            try h.pull("org/private")
        }
        #expect(
            "\(HubToken("hf_secret_value", source: .file("/t")))" == "token from the token file /t")
    }

    @Test("an unreachable endpoint is a network error (exit 69)")
    func unreachable() throws {
        var h = try PullHarness()
        h.configuration.endpoint = "http://127.0.0.1:9"  // discard port: nothing listens
        h.configuration.retry.maxAttempts = 2
        let error = #expect(throws: HubError.self) { try h.pull() }
        guard case .network(let url, _)? = error else {
            return #expect(Bool(false), "wrong error: \(String(describing: error))")
        }
        #expect(url.hasPrefix("http://127.0.0.1:9/"))
        #expect(error?.exitCode == .unavailable)
    }

    @Test(
        "file names that would leave the snapshot are refused before any download",
        arguments: [
            "../escape.json", "/etc/passwd.json", "a\\..\\b.json", "C:x.json", "a/./b.json",
            "a//b.json",
        ])
    func unsafePaths(_ name: String) throws {
        let repo = HubTestServer.Repo(
            id: "org/evil", refs: ["main": Fixture.commit],
            commits: [Fixture.commit: [.init(path: name, bytes: Array("{}".utf8))]])
        let h = try PullHarness(repos: [repo])
        let error = #expect(throws: HubError.self) { try h.pull("org/evil") }
        guard case .unsafePath(_, let path, _)? = error else {
            return #expect(Bool(false), "wrong error: \(String(describing: error))")
        }
        #expect(path == name)
        #expect(h.server.fileRequests.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: h.cache.root + "/escape.json"))
    }

    @Test("a file that is also used as a folder is refused (the link would lead into blobs/)")
    func fileUsedAsFolder() throws {
        let repo = HubTestServer.Repo(
            id: "org/evil", refs: ["main": Fixture.commit],
            commits: [
                Fixture.commit: [
                    .init(path: "a.json", bytes: [1]), .init(path: "a.json/b.json", bytes: [2]),
                ]
            ])
        let h = try PullHarness(repos: [repo])
        #expect(throws: HubError.self) { try h.pull("org/evil") }
        #expect(h.server.fileRequests.isEmpty)
    }

    @Test("too little free disk is refused before downloading (exit 74)")
    func diskTooSmall() throws {
        let h = try PullHarness()
        let plan = try h.downloader.plan(
            repoID: Fixture.repoID, revision: "main", patterns: FilePatterns())
        let tiny = SnapshotPlan(
            repoID: plan.repoID, revision: plan.revision, commit: plan.commit, files: plan.files,
            listing: plan.listing, listingWasCached: plan.listingWasCached,
            snapshotDirectory: plan.snapshotDirectory, freeBytes: 1000)
        #expect(
            throws: HubError.notEnoughDiskSpace(
                path: h.cache.root, needed: plan.bytesToDownload, available: 1000)
        ) {
            try h.downloader.download(tiny)
        }
        #expect(h.server.fileRequests.isEmpty)
        #expect(HubError.notEnoughDiskSpace(path: "", needed: 1, available: 0).exitCode == .ioError)
        #expect(plan.freeBytes != nil)
    }
}

import Foundation
import HubTestSupport
import Testing

@testable import PhiHub

/// A server and an empty cache for one test, with fast retries.
struct PullHarness {
    let server: HubTestServer
    let cache: HubCache
    var configuration: HubConfiguration

    init(repos: [HubTestServer.Repo] = [Fixture.repo()], pageSize: Int = 1000) throws {
        server = try HubTestServer(repos: repos, pageSize: pageSize)
        cache = HubCache(root: server.directory + "/cache")
        configuration = HubConfiguration(
            endpoint: server.endpoint,
            retry: RetryPolicy(maxAttempts: 4, baseDelay: 0.01, maxRetryAfter: 3),
            stallTimeout: 5)
    }

    var downloader: SnapshotDownloader {
        SnapshotDownloader(configuration: configuration, cache: cache, lockTimeout: 5)
    }

    func pull(
        _ repoID: String = Fixture.repoID, revision: String = "main",
        patterns: FilePatterns = FilePatterns(), jobs: Int = 4
    ) throws(HubError) -> SnapshotResult {
        let plan = try downloader.plan(repoID: repoID, revision: revision, patterns: patterns)
        return try downloader.download(plan, jobs: jobs)
    }

    var repoDirectory: String { cache.repoDirectory(repoID: Fixture.repoID) }

    func contents(_ relative: String) -> [UInt8]? {
        FileManager.default.contents(atPath: repoDirectory + "/" + relative).map(Array.init)
    }

    func names(_ relative: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: repoDirectory + "/" + relative))
            ?? []).sorted()
    }
}

@Suite("Snapshot layout (byte for byte what huggingface_hub writes)")
struct SnapshotLayoutTests {
    @Test("blobs, relative links, refs/main, the saved listing and CACHEDIR.TAG")
    func layout() throws {
        let h = try PullHarness()
        let result = try h.pull()
        let snapshot = "snapshots/" + Fixture.commit
        #expect(result.snapshotDirectory == h.repoDirectory + "/" + snapshot)
        #expect(result.commit == Fixture.commit)

        // refs/main holds the commit, with no trailing newline.
        #expect(h.contents("refs/main") == Array(Fixture.commit.utf8))
        // Blob names: sha256 for LFS files, git blob sha1 for the rest (hashes from Python).
        #expect(
            h.names("blobs")
                == [
                    Fixture.weightsSHA256, Fixture.extraBlob, Fixture.configBlob,
                    Fixture.readmeBlob, Fixture.tokenizerBlob,
                ].sorted())
        #expect(h.contents("blobs/" + Fixture.weightsSHA256) == Fixture.weights)
        #expect(h.contents("blobs/" + Fixture.configBlob) == Fixture.config)
        // Relative links: two levels up from snapshots/<commit>/, one more per folder.
        let fm = FileManager.default
        func link(_ path: String) -> String? {
            try? fm.destinationOfSymbolicLink(atPath: h.repoDirectory + "/\(snapshot)/" + path)
        }
        #expect(link("config.json") == "../../blobs/" + Fixture.configBlob)
        #expect(link("model.safetensors") == "../../blobs/" + Fixture.weightsSHA256)
        #expect(link("sub/extra.json") == "../../../blobs/" + Fixture.extraBlob)
        // Nothing partial stays; the listing is huggingface_hub's tree cache, byte for byte.
        #expect(!h.names("blobs").contains { $0.hasSuffix(".incomplete") })
        #expect(
            h.contents("trees/\(Fixture.commit).json").map { String(decoding: $0, as: UTF8.self) }
                == Self.listingWrittenByHuggingFaceHub)
        #expect(
            FileManager.default.contents(atPath: h.cache.root + "/CACHEDIR.TAG").map {
                String(decoding: $0, as: UTF8.self)
            } == HubCache.cacheDirTag)
        let lockDir = h.cache.root + "/.locks/models--org--model"
        #expect(fm.fileExists(atPath: lockDir + "/\(Fixture.weightsSHA256).lock"))
        // Blobs are readable by everyone, like huggingface_hub's (0644 before umask).
        let attributes = try fm.attributesOfItem(
            atPath: h.repoDirectory + "/blobs/" + Fixture.configBlob)
        let mode = try #require(attributes[.posixPermissions] as? NSNumber)
        #expect(mode.intValue & 0o444 == 0o444)
    }

    /// huggingface_hub 2.4's `write_tree_cache` output for the fixture's files (made with it).
    static let listingWrittenByHuggingFaceHub = """
        {
         "format_version": 1,
         "files": {
          "README.md": {
           "size": 8,
           "blob_id": "e339422d0f5def57816b7df65a4fd8979edc765d"
          },
          "config.json": {
           "size": 22,
           "blob_id": "d819ed66b72ceff70f6c646e22edfa1065d6e399"
          },
          "model.safetensors": {
           "size": 1000000,
           "blob_id": "3c341b1a0b31476fe8e3dfbcf55d260bd6d5cd3a",
           "lfs_sha256": "03e13961ed7fa418171dcd51141cf32b71b1baee49433b42aea7764eccfc0405",
           "lfs_size": 1000000
          },
          "sub/extra.json": {
           "size": 2,
           "blob_id": "9e26dfeeb6e641a33dae4961196235bdb965b21b"
          },
          "tokenizer.json": {
           "size": 18,
           "blob_id": "fdef94443aef6c464d438c4654540cb4245f8f1e"
          }
         }
        }
        """

    @Test("the saved listing reads back through the public API")
    func listingAPI() throws {
        let h = try PullHarness()
        _ = try h.pull()
        let listing = try #require(
            h.cache.fileListing(repoID: Fixture.repoID, commit: Fixture.commit))
        #expect(
            listing.map(\.path) == [
                "README.md", "config.json", "model.safetensors", "sub/extra.json", "tokenizer.json",
            ])
        let weights = try #require(listing.first { $0.path == "model.safetensors" })
        #expect(weights.lfs == .init(sha256: Fixture.weightsSHA256, size: 1_000_000))
        #expect(weights.blobID == Fixture.weightsPointerBlob)
        #expect(weights.blobName == Fixture.weightsSHA256)
        #expect(listing.first { $0.path == "config.json" }?.blobName == Fixture.configBlob)
        #expect(
            h.cache.fileListing(repoID: Fixture.repoID, commit: String(repeating: "d", count: 40))
                == nil)
    }

    @Test("a second pull of the same revision downloads nothing; a pinned commit asks nothing")
    func secondPullIsFree() throws {
        let h = try PullHarness()
        _ = try h.pull()
        #expect(h.server.fileRequests.count == 6)  // 4 resolve + 1 redirect hop + 1 CDN
        h.server.clearLog()
        let again = try h.pull()
        #expect(again.files.allSatisfy { $0.action == .cached })
        #expect(again.bytesDownloaded == 0)
        // Only "which commit is main now?"; the listing comes from the cache.
        #expect(h.server.requests.map(\.path) == ["/api/models/org/model/revision/main"])
        h.server.clearLog()
        _ = try h.pull(revision: Fixture.commit)
        #expect(h.server.requests.isEmpty)
    }

    @Test("patterns select files; the listing still records every file")
    func patterns() throws {
        let h = try PullHarness()
        let result = try h.pull(patterns: FilePatterns(include: ["*.json"], exclude: ["sub/*"]))
        #expect(result.files.map(\.path) == ["config.json", "tokenizer.json"])
        #expect(h.cache.fileListing(repoID: Fixture.repoID, commit: Fixture.commit)?.count == 5)
        #expect(!h.server.requests.contains { $0.server == "cdn" })
    }

    @Test("paged tree listings are followed (Link: rel=next)")
    func paging() throws {
        let h = try PullHarness(pageSize: 2)
        let result = try h.pull()
        #expect(result.files.count == 5)
        #expect(h.server.requests.filter { $0.path.contains("/tree/") }.count == 3)  // 6 items / 2
    }

    @Test("the token goes to the Hub and never to the CDN host")
    func tokenStaysOnTheHub() throws {
        var h = try PullHarness(repos: [Fixture.repo(gatedToken: "hf_secret")])
        h.configuration.token = HubToken("hf_secret", source: .environment("HF_TOKEN"))
        _ = try h.pull()
        let requests = h.server.requests
        #expect(requests.filter { $0.server == "hub" }.allSatisfy { $0.auth })
        let cdn = requests.filter { $0.server == "cdn" }
        #expect(!cdn.isEmpty && cdn.allSatisfy { !$0.auth })
        #expect(URLOrigin(h.server.cdn) != URLOrigin(h.server.endpoint))
    }

    @Test("a blob another revision already has is linked, not downloaded")
    func sharedBlobIsLinked() throws {
        let second = String(repeating: "e", count: 40)
        var repo = Fixture.repo()
        repo.refs["v2"] = second
        repo.commits[second] = Fixture.files.filter { $0.path != "README.md" }
        let h = try PullHarness(repos: [repo])
        _ = try h.pull()
        h.server.clearLog()
        let result = try h.pull(revision: "v2")
        #expect(result.files.allSatisfy { $0.action == .linked })
        #expect(h.server.fileRequests.isEmpty)
        #expect(h.contents("refs/v2") == Array(second.utf8))
        #expect(h.contents("refs/main") == Array(Fixture.commit.utf8))
    }
}

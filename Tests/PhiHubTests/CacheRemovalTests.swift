import Foundation
import HubTestSupport
import Testing

@testable import PhiHub

@Suite("Cache scan and removal")
struct CacheRemovalTests {
    /// Two revisions: main (all files) and v2 (README gone, a new config); they share the
    /// weights, the tokenizer and sub/extra.json.
    func twoRevisions() throws -> PullHarness {
        let second = String(repeating: "e", count: 40)
        var repo = Fixture.repo()
        repo.refs["v2"] = second
        var files = Fixture.files.filter { $0.path != "README.md" && $0.path != "config.json" }
        files.append(
            .init(path: "config.json", bytes: Array(#"{"model_type": "phi3", "v": 2}"#.utf8)))
        repo.commits[second] = files
        let h = try PullHarness(repos: [repo])
        _ = try h.pull()
        _ = try h.pull(revision: "v2")
        return h
    }

    @Test("scan counts shared blobs once, per revision and per repo")
    func scan() throws {
        let h = try twoRevisions()
        let repo = try #require(h.cache.scanRepo(repoID: Fixture.repoID))
        #expect(repo.revisions.map(\.refs) == [["main"], ["v2"]])
        let main = repo.revisions[0]
        #expect(main.sizeOnDisk == 1_000_000 + 22 + 18 + 2 + 8)
        #expect(repo.sizeOnDisk == main.sizeOnDisk + 30)  // + the second config.json only
        #expect(
            main.files.map(\.path) == [
                "README.md", "config.json", "model.safetensors", "sub/extra.json", "tokenizer.json",
            ])
        #expect(main.files.allSatisfy { $0.size != nil && $0.blobName != nil })
        #expect(h.cache.scan().map(\.repoID) == [Fixture.repoID])
    }

    @Test("removing one revision keeps the blobs the other one uses")
    func removeOneRevision() throws {
        let h = try twoRevisions()
        let repo = try #require(h.cache.scanRepo(repoID: Fixture.repoID))
        let plan = h.cache.deletionPlan(repo, commits: [Fixture.commit])
        #expect(plan.repoDirectory == nil)
        #expect(
            plan.blobFiles.map { ($0 as NSString).lastPathComponent }.sorted()
                == [Fixture.configBlob, Fixture.readmeBlob].sorted())
        #expect(plan.sharedBlobsKept == 3)
        #expect(plan.freedBytes == 22 + 8)
        try h.cache.delete(plan)
        let after = try #require(h.cache.scanRepo(repoID: Fixture.repoID))
        #expect(after.revisions.map(\.refs) == [["v2"]])
        #expect(after.revisions[0].files.allSatisfy { $0.size != nil })  // no broken link
        #expect(h.contents("refs/main") == nil)
        #expect(
            !FileManager.default.fileExists(
                atPath: h.cache.listingPath(repoID: Fixture.repoID, commit: Fixture.commit)))
    }

    @Test("removing every revision removes the repo folder and its lock folder")
    func removeAll() throws {
        let h = try twoRevisions()
        let repo = try #require(h.cache.scanRepo(repoID: Fixture.repoID))
        let plan = h.cache.deletionPlan(repo)
        #expect(plan.repoDirectory == repo.directory)
        #expect(plan.freedBytes == repo.sizeOnDisk)
        try h.cache.delete(plan)
        #expect(!FileManager.default.fileExists(atPath: repo.directory))
        #expect(
            !FileManager.default.fileExists(atPath: h.cache.root + "/.locks/models--org--model"))
        #expect(h.cache.scan().isEmpty)
    }

    @Test("partials: stale ones go, one whose lock is held stays and keeps the repo")
    func partials() throws {
        let h = try PullHarness()
        _ = try h.pull(patterns: FilePatterns(include: ["*.json"]))
        let blobs = h.repoDirectory + "/blobs/"
        let ours = blobs + Fixture.weightsSHA256 + ".incomplete"
        let theirs = blobs + "feedface" + String(repeating: "0", count: 56) + ".1a2b3c4d.incomplete"
        try Data(count: 1000).write(to: URL(fileURLWithPath: ours))
        try Data(count: 10).write(to: URL(fileURLWithPath: theirs))
        let repo = try #require(h.cache.scanRepo(repoID: Fixture.repoID))
        #expect(
            repo.partials.map(\.blobName).sorted()
                == [Fixture.weightsSHA256, "feedface" + String(repeating: "0", count: 56)].sorted())
        #expect(repo.partialBytes == 1010)

        let holder = FileLock(
            path: h.cache.lockPath(repoID: Fixture.repoID, blobName: Fixture.weightsSHA256))
        #expect(try holder.tryAcquire())
        let plan = h.cache.deletionPlan(repo)
        #expect(plan.livePartials == [ours])
        #expect(plan.stalePartials == [theirs])
        #expect(plan.repoDirectory == nil)  // a live download keeps the folder
        #expect(!h.cache.removeStalePartial(ours, repoID: Fixture.repoID))
        holder.release()
        #expect(h.cache.removeStalePartial(ours, repoID: Fixture.repoID))
        #expect(!FileManager.default.fileExists(atPath: ours))
    }
}

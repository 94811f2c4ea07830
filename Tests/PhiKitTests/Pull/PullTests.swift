import Foundation
import PhiFormats
import PhiHub
import Testing

@testable import PhiKit

/// `PhiKit.pull` as `run` will call it. Network paths are covered against the local Hub in
/// PhiHubTests and CLITests; here: offline use of a cache huggingface_hub could have written,
/// the bundled model, and refusals.
@Suite("pull (library)")
struct PullTests {
    let commit = String(repeating: "a", count: 40)

    @Test("offline, a complete cache is used as is; progress reports resolving then the plan")
    func offlineFromAHandMadeCache() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "phikit-pull-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let snapshot = try HandMadeCache.add(
            try TinyFiles.bf16(), repoID: "org/tiny", commit: commit, root: root)
        let env = [
            "HF_HUB_CACHE": root.path, "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9",
        ]
        var events: [String] = []
        let result = try pull(PullOptions(model: "org/tiny", environment: env)) { event in
            switch event {
            case .resolving(let repo, let revision): events.append("resolving \(repo)@\(revision)")
            case .planned(let plan):
                events.append("planned \(plan.files.count) \(plan.bytesToDownload)")
            case .downloading: events.append("downloading")
            }
        }
        #expect(events.prefix(2) == ["resolving org/tiny@main", "planned 2 0"])
        #expect(result.snapshotDirectory == snapshot.path)
        #expect(result.commit == commit && result.bytesDownloaded == 0)
        #expect(result.files.map(\.action) == ["cached", "cached"])
        // A pinned commit needs no ref.
        let pinned = try pull(PullOptions(model: "org/tiny@\(commit)", environment: env))
        #expect(pinned.snapshotDirectory == snapshot.path)
        // And a revision the cache lacks is an offline miss, exit 66.
        var v2 = PullOptions(model: "org/tiny", environment: env)
        v2.revision = "v2"
        #expect(throws: HubError.offline(repoID: "org/tiny", revision: "v2", missing: [])) {
            try pull(v2)
        }
    }

    @Test("the bundled demo model needs no download; a plain directory is refused")
    func bundledAndDirectories() throws {
        let registry = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("registry.json")
        let env = ["PHIKIT_REGISTRY": registry.path, "XDG_CONFIG_HOME": "/nonexistent"]
        let result = try pull(PullOptions(model: "stories-260k", environment: env))
        #expect(result.bundled && result.snapshotDirectory.hasSuffix("models/stories-260k"))
        let dir = FileManager.default.temporaryDirectory.path
        #expect(throws: PullError.notAHubModel(dir)) {
            try pull(PullOptions(model: dir, environment: env))
        }
        #expect(PullError.notAHubModel(dir).exitCode == .usage)
        var noJobs = PullOptions(model: "org/x", environment: env)
        noJobs.jobs = 0
        #expect(throws: PullError.badJobs(0)) { try pull(noJobs) }
    }
}

@Suite("rm (library)")
struct RemoveTests {
    @Test("one revision by ref, then the rest; a converted model by name")
    func remove() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "phikit-rm-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let (a, b) = (String(repeating: "a", count: 40), String(repeating: "b", count: 40))
        var files = try TinyFiles.bf16()
        try HandMadeCache.add(
            files, repoID: "org/tiny", commit: a, root: root.appendingPathComponent("hub"))
        files["config.json"] = Array("{}".utf8)
        let keep = try HandMadeCache.add(
            files, repoID: "org/tiny", commit: b, ref: "v2",
            root: root.appendingPathComponent("hub"))
        let env = [
            "HF_HUB_CACHE": root.appendingPathComponent("hub").path,
            "PHIKIT_HOME": root.appendingPathComponent("store").path,
        ]

        var main = RemoveOptions(model: "org/tiny", environment: env)
        main.revision = "main"
        let one = try planRemoval(main)
        #expect(one.commits == [a] && !one.removesModel && one.sharedBlobsKept == 1)
        #expect(one.freedBytes == 49)  // only main's config.json
        try PhiKit.remove(one, environment: env)
        #expect(try ModelWeights(directory: keep.path).tensorNames.count == 2)  // v2 still loads

        var prefix = RemoveOptions(model: "org/tiny", environment: env)
        prefix.revision = "aaaa"
        #expect(throws: RemoveError.self) { try planRemoval(prefix) }
        let rest = try planRemoval(RemoveOptions(model: "org/tiny@bbbb", environment: env))
        #expect(rest.commits == [b] && rest.removesModel)
        try PhiKit.remove(rest, environment: env)
        #expect(
            !FileManager.default.fileExists(
                atPath: root.appendingPathComponent("hub/models--org--tiny").path))
        #expect(throws: RemoveError.notInCache("org/tiny", cache: env["HF_HUB_CACHE"]!)) {
            try planRemoval(RemoveOptions(model: "org/tiny", environment: env))
        }

        let stored = root.appendingPathComponent("store/models/tiny-4bit")
        try FileManager.default.createDirectory(at: stored, withIntermediateDirectories: true)
        try Data([1]).write(to: stored.appendingPathComponent("config.json"))
        let plan = try planRemoval(RemoveOptions(model: "tiny-4bit", environment: env))
        #expect(plan.source == "converted" && plan.paths == [stored.path] && plan.freedBytes == 1)
        try PhiKit.remove(plan, environment: env)
        #expect(!FileManager.default.fileExists(atPath: stored.path))
    }

    @Test("prune: stale partials and dead convert folders go, live ones stay")
    func prune() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "phikit-prune-\(UUID())")
        defer { try? FileManager.default.removeItem(at: root) }
        let hub = root.appendingPathComponent("hub")
        try HandMadeCache.add(
            try TinyFiles.bf16(), repoID: "org/tiny", commit: String(repeating: "a", count: 40),
            root: hub)
        let blobs = hub.appendingPathComponent("models--org--tiny/blobs")
        let live = String(repeating: "1", count: 64)
        try Data(count: 10).write(to: blobs.appendingPathComponent("\(live).incomplete"))
        try Data(count: 20).write(
            to: blobs.appendingPathComponent(String(repeating: "2", count: 64) + ".incomplete"))
        let locks = hub.appendingPathComponent(".locks/models--org--tiny")
        try FileManager.default.createDirectory(at: locks, withIntermediateDirectories: true)
        let holder = FileLock(path: locks.appendingPathComponent("\(live).lock").path)
        #expect(try holder.tryAcquire())
        let convertDir = root.appendingPathComponent("store/models/m.incomplete-q1w2e3")
        try FileManager.default.createDirectory(at: convertDir, withIntermediateDirectories: true)
        let env = [
            "HF_HUB_CACHE": hub.path, "PHIKIT_HOME": root.appendingPathComponent("store").path,
        ]

        let dry = prunePartials(dryRun: true, environment: env)
        #expect(dry.removed.map(\.kind) == ["download", "convert"] && dry.live.count == 1)
        #expect(FileManager.default.fileExists(atPath: convertDir.path))
        let done = prunePartials(environment: env)
        #expect(done.freedBytes == 20)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: blobs.path).filter {
                $0.hasSuffix(".incomplete")
            } == ["\(live).incomplete"])
        #expect(!FileManager.default.fileExists(atPath: convertDir.path))
        holder.release()
        #expect(prunePartials(environment: env).removed.map(\.bytes) == [10])
    }
}

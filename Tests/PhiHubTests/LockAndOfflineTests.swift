import Foundation
import HubTestSupport
import Testing

@testable import PhiHub

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Blob locks")
struct LockTests {
    @Test("flock: a held lock is refused to a second holder, free again after release")
    func exclusive() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = FileLock(path: dir + "/blob.lock")
        let second = FileLock(path: dir + "/blob.lock")
        #expect(try first.tryAcquire())
        #expect(try !second.tryAcquire())
        #expect(second.holder == "pid \(getpid())@\(FileLock.hostName)")
        first.release()
        #expect(try second.tryAcquire())
        second.release()
    }

    @Test("a lock file left by a killed process does not block (flock dies with its holder)")
    func leftoverLockFileIsFree() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try "999999@\(FileLock.hostName)\n".write(
            toFile: dir + "/blob.lock", atomically: true, encoding: .utf8)
        #expect(try FileLock(path: dir + "/blob.lock").tryAcquire())
    }

    @Test("exclusive-create fallback (no flock): a dead holder's lock is stale and taken over")
    func softLockStaleRecovery() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/blob.lock"
        // A PID that cannot be running: above the kernel's pid_max.
        try "4194999@\(FileLock.hostName)\n".write(toFile: path, atomically: true, encoding: .utf8)
        let lock = FileLock(path: path, mode: .exclusiveCreate)
        #expect(try lock.tryAcquire())
        // Held by a live process (us): the next one waits, then times out.
        let other = FileLock(path: path, mode: .exclusiveCreate)
        #expect(try !other.acquire(timeout: 0.2))
        // Another host's lock is never judged stale from here.
        lock.release()
        try "1@some-other-host\n".write(toFile: path, atomically: true, encoding: .utf8)
        #expect(try !other.tryAcquire())
    }

    @Test("a download waits for another process holding the blob's lock, then uses its blob")
    func waitsForTheHolder() throws {
        let h = try PullHarness()
        let lockPath = h.cache.lockPath(repoID: Fixture.repoID, blobName: Fixture.weightsSHA256)
        try FileManager.default.createDirectory(
            atPath: (lockPath as NSString).deletingLastPathComponent,
            withIntermediateDirectories: true)
        let holder = FileLock(path: lockPath)
        #expect(try holder.tryAcquire())
        let downloader = h.downloader
        let plan = try downloader.plan(
            repoID: Fixture.repoID, revision: "main", patterns: FilePatterns())
        let done = DispatchSemaphore(value: 0)
        let outcome = Box()
        Thread.detachNewThread {
            outcome.result = Result { try downloader.download(plan, jobs: 2) }
            done.signal()
        }
        // While we hold the lock the weights are not fetched; the small files are.
        Thread.sleep(forTimeInterval: 0.5)
        #expect(!h.server.requests.contains { $0.server == "cdn" })
        // "The other process" finishes the blob, then lets go.
        let blob = h.cache.blobPath(repoID: Fixture.repoID, blobName: Fixture.weightsSHA256)
        try Data(Fixture.weights).write(to: URL(fileURLWithPath: blob))
        holder.release()
        #expect(done.wait(timeout: .now() + 10) == .success)
        let result = try #require(try outcome.result?.get())
        #expect(result.files.first { $0.path == "model.safetensors" }?.bytesDownloaded == 0)
        #expect(!h.server.requests.contains { $0.server == "cdn" })
    }

    @Test("a directory lock tells a live job's folder from a dead one's")
    func directoryLock() throws {
        let dir = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let held = try #require(DirectoryLock(path: dir))
        #expect(DirectoryLock(path: dir) == nil)
        held.release()
        #expect(DirectoryLock(path: dir) != nil)
    }

    final class Box: @unchecked Sendable {
        var result: Result<SnapshotResult, any Error>?
    }
}

@Suite("Offline (HF_HUB_OFFLINE)")
struct OfflineTests {
    @Test("a complete snapshot is used without any request; a commit pin works too")
    func completeSnapshot() throws {
        var h = try PullHarness()
        _ = try h.pull()
        h.server.clearLog()
        h.configuration.offline = true
        let result = try h.pull()
        #expect(result.commit == Fixture.commit)
        #expect(result.files.count == 5 && result.bytesDownloaded == 0)
        _ = try h.pull(revision: Fixture.commit)
        #expect(h.server.requests.isEmpty)
    }

    @Test("an incomplete or absent snapshot fails with exit 66, naming what is missing")
    func incomplete() throws {
        var h = try PullHarness()
        h.configuration.offline = true
        #expect(throws: HubError.offline(repoID: Fixture.repoID, revision: "main", missing: [])) {
            try h.pull()
        }
        h.configuration.offline = false
        _ = try h.pull(patterns: FilePatterns(include: ["*.json"]))
        h.server.clearLog()
        h.configuration.offline = true
        _ = try h.pull(patterns: FilePatterns(include: ["*.json"]))
        let error = HubError.offline(
            repoID: Fixture.repoID, revision: "main", missing: ["model.safetensors"])
        #expect(throws: error) {
            try h.pull(patterns: FilePatterns(include: ["*.json", "*.safetensors"]))
        }
        #expect(error.exitCode == .noInput)
        #expect(h.server.requests.isEmpty)
    }
}

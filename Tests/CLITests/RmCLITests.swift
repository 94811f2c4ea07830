import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `phikit rm` and `phikit rm --partials`, from the binary.
@Suite("phikit rm")
struct RmCLITests {
    @Test("asks first: without a terminal and without -y it refuses (exit 64)")
    func confirmation() throws {
        let hub = try HubServerProcess()
        #expect(try Phikit.run(["pull", "org/model"], environment: hub.environment).status == 0)
        let refused = try Phikit.run(["rm", "org/model"], environment: hub.environment)
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("error: refusing to delete without confirmation"))
        #expect(refused.stderr.contains("hint: pass -y"))
        let dry = try Phikit.run(["rm", "org/model", "--dry-run"], environment: hub.environment)
        #expect(dry.status == 0)
        #expect(
            dry.stdout.hasPrefix(
                "[dry-run] would remove org/model (1 revision, whole repo; 1.00 MB)"))
        #expect(FileManager.default.fileExists(atPath: hub.snapshot))

        let removed = try Phikit.run(["rm", "org/model", "-y"], environment: hub.environment)
        #expect(removed.status == 0)
        #expect(removed.stdout.hasPrefix("removed org/model (1 revision, whole repo; 1.00 MB)"))
        #expect(!FileManager.default.fileExists(atPath: hub.repoDirectory.path))
        let again = try Phikit.run(["rm", "org/model", "-y"], environment: hub.environment)
        #expect(again.status == 66)
    }

    @Test("--revision: an unknown revision lists the cached ones; a converted model by name")
    func revisionAndStore() throws {
        let hub = try HubServerProcess()
        #expect(try Phikit.run(["pull", "org/model"], environment: hub.environment).status == 0)
        let wrong = try Phikit.run(
            ["rm", "org/model", "--revision", "v9", "-y"], environment: hub.environment)
        #expect(wrong.status == 66)
        #expect(wrong.stderr.contains("hint: cached revisions: main"))
        let json = try Phikit.run(
            ["rm", "org/model@main", "--dry-run", "--json"], environment: hub.environment)
        #expect(json.stdout.contains("\"commits\" : [\n    \"\(HubServerProcess.commit)\""))

        let store = hub.root.appendingPathComponent("store/models")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.moveItem(
            at: try TinyModel.phi3Directory(), to: store.appendingPathComponent("tiny-bf16"))
        let r = try Phikit.run(["rm", "tiny-bf16", "-y"], environment: hub.environment)
        #expect(r.status == 0)
        #expect(r.stdout.contains("converted model"))
        #expect(
            !FileManager.default.fileExists(atPath: store.appendingPathComponent("tiny-bf16").path))
    }

    @Test("--partials removes abandoned partials, never one a live process holds")
    func partials() throws {
        let hub = try HubServerProcess()
        #expect(
            try Phikit.run(
                ["pull", "org/model", "--include", "*.json"], environment: hub.environment
            ).status == 0)
        let blobs = hub.repoDirectory.appendingPathComponent("blobs")
        let stale = blobs.appendingPathComponent(
            HubServerProcess.weightsSHA256 + ".a1b2c3d4.incomplete")
        try Data(count: 4096).write(to: stale)
        let store = hub.root.appendingPathComponent("store/models")
        let dead = store.appendingPathComponent("m-4bit.incomplete-AbC123")
        let live = store.appendingPathComponent("m-8bit.incomplete-XyZ789")
        for dir in [dead, live] {
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try Data(count: 100).write(to: dir.appendingPathComponent("model.safetensors"))
        }
        // This test process plays the running convert: it holds the folder's lock.
        let fd = open(live.path, O_RDONLY | O_DIRECTORY)
        #expect(flock(fd, LOCK_EX) == 0)
        defer { close(fd) }

        let dry = try Phikit.run(["rm", "--partials", "--dry-run"], environment: hub.environment)
        #expect(dry.stdout.contains("would remove 2 partial(s), 4.20 kB"))
        #expect(dry.stdout.contains(live.path + "  (in use by a running convert; kept)"))
        let refused = try Phikit.run(["rm", "--partials"], environment: hub.environment)
        #expect(refused.status == 64)
        let r = try Phikit.run(["rm", "--partials", "-y"], environment: hub.environment)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("removed 2 partial(s)"))
        #expect(!FileManager.default.fileExists(atPath: stale.path))
        #expect(!FileManager.default.fileExists(atPath: dead.path))
        #expect(FileManager.default.fileExists(atPath: live.path))
    }

    /// In the store, and (issue 17) beside a `-o` anywhere else: a record in phikit's home
    /// says where the folder is.
    @Test(
        "a convert in progress marks its folder live; killed, the folder is pruned",
        arguments: [false, true])
    func killedConvert(besideOutput: Bool) throws {
        let hub = try HubServerProcess()
        let source = try TinyModel.mediumPhi3Directory()
        let work = try TinyModel.temporaryDirectory()
        defer {
            try? FileManager.default.removeItem(at: source)
            try? FileManager.default.removeItem(at: work)
        }
        let binary = try #require(Phikit.url)
        let convert = Process()
        convert.executableURL = binary
        convert.arguments =
            ["convert", source.path, "-q"] + (besideOutput ? ["-o", work.path + "/out"] : [])
        convert.environment = ProcessInfo.processInfo.environment.merging(hub.environment) { $1 }
        convert.standardOutput = FileHandle.nullDevice
        convert.standardError = FileHandle.nullDevice
        try convert.run()
        let store = besideOutput ? work : hub.root.appendingPathComponent("store/models")
        func temporary() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: store.path)) ?? []).filter {
                $0.contains(".incomplete-")
            }
        }
        let deadline = Date().addingTimeInterval(60)
        while temporary().isEmpty && convert.isRunning && Date() < deadline { usleep(5000) }
        let name = try #require(temporary().first)
        let during = try Phikit.run(["rm", "--partials", "-y"], environment: hub.environment)
        #expect(
            during.stdout.contains(name + "  (in use by a running convert; kept)"),
            "\(during.stdout)")
        kill(convert.processIdentifier, SIGKILL)
        convert.waitUntilExit()
        #expect(temporary() == [name])
        let after = try Phikit.run(["rm", "--partials", "-y"], environment: hub.environment)
        #expect(after.status == 0)
        #expect(temporary().isEmpty, "\(after.stdout)")
        // Nothing else in the output's folder was touched, and the record is gone too.
        #expect(try FileManager.default.contentsOfDirectory(atPath: work.path) == [])
        let records = hub.root.appendingPathComponent("store/partials").path
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []) == [])
    }

    /// A SIGKILL during the atomic write of a record leaves its temporary file in
    /// `partials/`, holding the path of a folder named otherwise: rm --partials drops that
    /// file and never touches the folder it names.
    @Test("a stray file among the convert records is dropped, its folder left alone")
    func strayRecord() throws {
        let hub = try HubServerProcess()
        let work = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: work) }
        let records = hub.root.appendingPathComponent("store/partials")
        try FileManager.default.createDirectory(at: records, withIntermediateDirectories: true)
        let stray = records.appendingPathComponent(".out.incomplete-ab12cd.tmp-x9")
        try Data(work.path.utf8).write(to: stray)
        let r = try Phikit.run(["rm", "--partials", "-y"], environment: hub.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stray.path))
        #expect(FileManager.default.fileExists(atPath: work.path))
    }
}

import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `phikit pull` from the built binary against the local Hub look-alike.
@Suite("phikit pull")
struct PullCLITests {
    @Test("prints the snapshot path; the plan and summary go to stderr without escape codes")
    func pull() throws {
        let hub = try HubServerProcess()
        let r = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == hub.snapshot + "\n")
        #expect(r.stderr.contains("pulling org/model@main (ccccccc): 4 files, 1.00 MB; 0 B cached"))
        #expect(r.stderr.contains("downloaded 1.00 MB in"))
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\r"))
        // mlx-lm's default patterns: no README.
        #expect(!FileManager.default.fileExists(atPath: hub.snapshot + "/README.md"))
        let weights = try Data(
            contentsOf: URL(fileURLWithPath: hub.snapshot + "/model.safetensors"))
        #expect(Array(weights) == HubServerProcess.weights)

        hub.clearLog()
        let again = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(again.status == 0)
        #expect(again.stderr.contains("up to date: 4 files"))
        #expect(hub.requests.map(\.path) == ["/api/models/org/model/revision/main"])
    }

    @Test("--dry-run lists the plan and downloads nothing; --json gives the plan")
    func dryRun() throws {
        let hub = try HubServerProcess()
        let r = try Phikit.run(
            ["pull", "org/model", "--dry-run", "--include", "*"], environment: hub.environment)
        #expect(r.status == 0)
        #expect(r.stdout.hasPrefix("[dry-run] Will download 5 files (out of 5) totalling 1.00 MB."))
        #expect(r.stdout.contains("model.safetensors  1.00 MB  download"))
        #expect(!hub.requests.contains { $0.path.contains("/resolve/") })
        #expect(!FileManager.default.fileExists(atPath: hub.snapshot))
        let json = try Phikit.run(
            ["pull", "org/model", "--dry-run", "--json"], environment: hub.environment)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(object["dry_run"] as? Bool == true)
        #expect(object["commit"] as? String == HubServerProcess.commit)
        #expect((object["files"] as? [Any])?.count == 4)
    }

    @Test("--json result after a real pull")
    func json() throws {
        let hub = try HubServerProcess()
        let r = try Phikit.run(
            ["pull", "org/model", "--json", "-j", "2"], environment: hub.environment)
        #expect(r.status == 0)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["snapshot_directory"] as? String == hub.snapshot)
        #expect(object["bytes_downloaded"] as? Int == 1_000_000 + 22 + 18 + 2)
        #expect(object["repo_id"] as? String == "org/model")
    }

    @Test("errors: exit code, one error line, a hint, and never the token")
    func errors() throws {
        let hub = try HubServerProcess(gatedToken: "hf_rightToken")
        let missing = try Phikit.run(["pull", "org/none"], environment: hub.environment)
        #expect(missing.status == 66)
        #expect(
            missing.stderr.contains("error: repository 'org/none' not found on \(hub.endpoint)"))

        let noToken = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(noToken.status == 69)
        #expect(
            noToken.stderr.contains(
                "error: 'org/model' is gated or private (HTTP 401) and no token was sent"))
        #expect(noToken.stderr.contains("hint: accept the licence at \(hub.endpoint)/org/model"))

        var env = hub.environment
        env["HF_TOKEN"] = "hf_wrongSecret123"
        let wrong = try Phikit.run(["pull", "org/model"], environment: env)
        #expect(wrong.status == 69)
        #expect(wrong.stderr.contains("with the token from HF_TOKEN"))
        #expect(
            !wrong.stderr.contains("hf_wrongSecret123")
                && !wrong.stdout.contains("hf_wrongSecret123"))

        let flag = try Phikit.run(
            ["pull", "org/model", "--token", "hf_rightToken", "--include", "*.json"],
            environment: env)
        #expect(flag.status == 0, "\(flag.stderr)")

        let jobs = try Phikit.run(["pull", "org/model", "--jobs", "0"], environment: env)
        #expect(jobs.status == 64)
        #expect(jobs.stderr.contains("error: --jobs must be between 1 and 64"))
    }

    @Test("a corrupt file fails the pull with exit 65 and leaves nothing in the snapshot")
    func corrupt() throws {
        let hub = try HubServerProcess()
        try hub.setFaults(#"[{"kind": "corrupt", "path": "/lfs/"}]"#)
        let r = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(r.status == 65)
        #expect(r.stderr.contains("error: model.safetensors: downloaded bytes have sha256"))
        #expect(!FileManager.default.fileExists(atPath: hub.snapshot + "/model.safetensors"))
        let blobs = try FileManager.default.contentsOfDirectory(
            atPath: hub.repoDirectory.path + "/blobs")
        #expect(!blobs.contains { $0.hasPrefix(HubServerProcess.weightsSHA256) })
    }

    @Test("kill -9 in the middle of a file: the next pull resumes from the partial's last byte")
    func resumeAfterKill() throws {
        let hub = try HubServerProcess()
        let (process, partial) = try slowPull(hub, until: 150_000, stderr: FileHandle.nullDevice)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        let kept = size(partial)
        #expect(kept >= 150_000 && kept < 1_000_000)

        try hub.setFaults("[]")
        hub.clearLog()
        let r = try Phikit.run(["pull", "org/model", "--json"], environment: hub.environment)
        #expect(r.status == 0, "\(r.stderr)")
        let cdn = hub.requests.filter { $0.server == "cdn" }
        #expect(cdn.map(\.range) == ["bytes=\(kept)-"])
        let weights = try Data(
            contentsOf: URL(fileURLWithPath: hub.snapshot + "/model.safetensors"))
        #expect(Array(weights) == HubServerProcess.weights)
        #expect(r.stdout.contains("\"resumed_from\" : \(kept)"))
    }

    @Test("Ctrl-C stops the transfer, keeps the partial (exit 130), and the next pull resumes it")
    func interrupt() throws {
        let hub = try HubServerProcess()
        let stderr = Pipe()
        let (process, partial) = try slowPull(hub, until: 100_000, stderr: stderr)
        process.interrupt()
        process.waitUntilExit()
        let message = String(
            decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130, "\(message)")
        #expect(message.contains("error: interrupted; partial downloads are kept"))
        let kept = size(partial)
        #expect(kept >= 100_000 && kept < 1_000_000)
        try hub.setFaults("[]")
        hub.clearLog()
        #expect(try Phikit.run(["pull", "org/model"], environment: hub.environment).status == 0)
        #expect(hub.requests.filter { $0.server == "cdn" }.map(\.range) == ["bytes=\(kept)-"])
    }

    @Test("HF_HUB_OFFLINE=1: a complete snapshot with no request; otherwise exit 66")
    func offline() throws {
        let hub = try HubServerProcess()
        var env = hub.environment
        env["HF_HUB_OFFLINE"] = "1"
        let empty = try Phikit.run(["pull", "org/model"], environment: env)
        #expect(empty.status == 66)
        #expect(empty.stderr.contains("is not in the cache and HF_HUB_OFFLINE is set"))
        #expect(try Phikit.run(["pull", "org/model"], environment: hub.environment).status == 0)
        hub.clearLog()
        let cached = try Phikit.run(["pull", "org/model"], environment: env)
        #expect(cached.status == 0)
        #expect(cached.stdout == hub.snapshot + "\n")
        #expect(hub.requests.isEmpty)
    }

    @Test("on a terminal: a progress bar with rate, and per-file lines")
    func terminalProgress() throws {
        let hub = try HubServerProcess()
        try hub.setFaults(#"[{"kind": "slow", "path": "/lfs/", "rate": 2000000}]"#)
        let binary = try #require(Phikit.url)
        // script(1) gives phikit a pseudo-terminal; its output is what the terminal showed.
        let r = try runInTerminal(binary.path + " pull org/model", environment: hub.environment)
        #expect(r.contains("\u{1B}[2K"))
        #expect(r.contains("files  ") && r.contains("/s"))
        #expect(r.contains("model.safetensors"))
        #expect(r.contains(hub.snapshot))
    }

    /// Starts `phikit pull` against a server that sends the weights at 200 kB/s, and returns
    /// once the partial holds `bytes` bytes (or the pull ended).
    private func slowPull(
        _ hub: HubServerProcess, until bytes: Int, stderr: Any
    ) throws -> (Process, String) {
        try hub.setFaults(#"[{"kind": "slow", "path": "/lfs/", "rate": 200000}]"#)
        let binary = try #require(Phikit.url)
        let process = Process()
        process.executableURL = binary
        process.arguments = ["pull", "org/model"]
        process.environment = ProcessInfo.processInfo.environment.merging(hub.environment) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = stderr
        try process.run()
        let partial = hub.repoDirectory.appendingPathComponent(
            "blobs/\(HubServerProcess.weightsSHA256).incomplete"
        ).path
        let deadline = Date().addingTimeInterval(30)
        while size(partial) < bytes && Date() < deadline && process.isRunning { usleep(20_000) }
        return (process, partial)
    }

    private func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue
            ?? 0
    }

    private func runInTerminal(_ command: String, environment: [String: String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-q", "-e", "-c", command, "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

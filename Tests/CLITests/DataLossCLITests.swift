import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 17's data-loss classes, from the binary: `rm` with a name that is no name or through
/// links leading out of the cache, and results that could not be written.
@Suite("no input deletes a user's files or loses output silently")
struct DataLossCLITests {
    @Test("rm \"\" (an unset variable) and other non-names are refused; the store stays")
    func emptyNames() throws {
        let hub = try HubServerProcess()
        let store = hub.root.appendingPathComponent("store/models")
        try FileManager.default.createDirectory(
            at: store.appendingPathComponent("kept-4bit"), withIntermediateDirectories: true)
        for name in ["", " ", "\t", "a\nb"] {
            let r = try Phikit.run(["rm", name, "-y"], environment: hub.environment)
            #expect(r.status == 64, "rm '\(name)': \(r.stderr)")
            #expect(r.stderr.hasPrefix("error: "))
        }
        #expect(
            FileManager.default.fileExists(atPath: store.appendingPathComponent("kept-4bit").path))
        let run = try Phikit.run(["run", "", "-p", "hi"], environment: hub.environment)
        #expect(run.status == 64, "\(run.stderr)")
    }

    /// A cache repo whose `blobs/` (or `snapshots/`) is a link to a folder of the user's.
    private func linkedRepo(_ hub: HubServerProcess, linking folder: String) throws -> URL {
        let outside = hub.root.appendingPathComponent("outside")
        let commit = HubServerProcess.commit
        let repo = hub.root.appendingPathComponent("cache/models--org--evil")
        let fm = FileManager.default
        try fm.createDirectory(
            at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/main"))
        try fm.createDirectory(
            at: outside.appendingPathComponent(commit), withIntermediateDirectories: true)
        try Data("precious".utf8).write(to: outside.appendingPathComponent("precious.txt"))
        try Data("precious".utf8).write(to: outside.appendingPathComponent(commit + "/config.json"))
        try fm.createSymbolicLink(
            at: repo.appendingPathComponent(folder), withDestinationURL: outside)
        if folder == "blobs" {
            let snapshot = repo.appendingPathComponent("snapshots/" + commit)
            try fm.createDirectory(at: snapshot, withIntermediateDirectories: true)
            try fm.createSymbolicLink(
                atPath: snapshot.appendingPathComponent("config.json").path,
                withDestinationPath: "../../blobs/precious.txt")
        }
        return outside
    }

    @Test(
        "rm never deletes through a blobs/ or snapshots/ link that leads out of the cache",
        arguments: ["blobs", "snapshots"])
    func linksOutOfTheCache(folder: String) throws {
        let hub = try HubServerProcess()
        let outside = try linkedRepo(hub, linking: folder)
        let before = try FileManager.default.subpathsOfDirectory(atPath: outside.path).sorted()
        let r = try Phikit.run(["rm", "org/evil", "-y"], environment: hub.environment)
        #expect(r.status == 74, "\(r.stdout)\(r.stderr)")
        #expect(r.stderr.contains("outside"), "\(r.stderr)")
        #expect(
            try FileManager.default.subpathsOfDirectory(atPath: outside.path).sorted() == before)
    }

    @Test("rm --dry-run lists every path that would go")
    func dryRunListsPaths() throws {
        let hub = try HubServerProcess()
        #expect(try Phikit.run(["pull", "org/model"], environment: hub.environment).status == 0)
        let dry = try Phikit.run(["rm", "org/model", "--dry-run"], environment: hub.environment)
        #expect(dry.stdout.contains("\n  " + hub.repoDirectory.path + "\n"), "\(dry.stdout)")
    }

    /// Runs phikit with stdout on `/dev/full`, or on a pipe nobody reads (closed before start).
    private func runWithBrokenStdout(
        _ arguments: [String], closedPipe: Bool, stdin: String? = nil
    ) throws -> (
        status: Int32, stderr: String
    ) {
        let process = Process()
        process.executableURL = Phikit.url
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(["NO_COLOR": "1"]) { $1 }
        let pipe = Pipe()
        if closedPipe {
            try pipe.fileHandleForReading.close()
            process.standardOutput = pipe
        } else {
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: "/dev/full"))
        }
        let err = Pipe()
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "killed by a signal")
        return (process.terminationStatus, String(decoding: message, as: UTF8.self))
    }

    @Test(
        "stdout on a full disk: exit 74 with an error; on a closed pipe: quiet, non-zero",
        arguments: [["help"], ["--version"], ["inspect", "--help"], ["list", "--available"]])
    func unwritableStdout(arguments: [String]) throws {
        let full = try runWithBrokenStdout(arguments, closedPipe: false)
        #expect(full.status == 74)
        #expect(full.stderr.hasPrefix("error: cannot write to standard output"), "\(full.stderr)")
        let closed = try runWithBrokenStdout(arguments, closedPipe: true)
        #expect(closed.status == 74)
        #expect(closed.stderr == "")
    }

    /// chat streamed its answers with `print`, which drops write errors: `> /dev/full` and a
    /// closed pipe ended with exit 0. It stops at the first failed write, as `run` does.
    @Test("chat's answers on a full disk: exit 74 with an error; on a closed pipe: quiet 74")
    func chatUnwritableStdout() throws {
        let model = try Hostile.storiesCopy()
        defer { try? FileManager.default.removeItem(at: model.deletingLastPathComponent()) }
        try Data("{% for m in messages %}{{ m.content }}{% endfor %}".utf8).write(
            to: model.appendingPathComponent("chat_template.jinja"))
        let arguments = ["chat", model.path, "-m", "4", "--temp", "0"]
        let full = try runWithBrokenStdout(arguments, closedPipe: false, stdin: "Hi\nAgain\n")
        #expect(full.status == 74, "\(full.stderr)")
        #expect(full.stderr.hasPrefix("error: cannot write to standard output"), "\(full.stderr)")
        let closed = try runWithBrokenStdout(arguments, closedPipe: true, stdin: "Hi\nAgain\n")
        #expect(closed.status == 74, "\(closed.stderr)")
        #expect(closed.stderr == "")
    }

    /// Results reach stdout only through StandardOutput: a bare `print` drops write errors
    /// (chat and the GGUF commands used it). Lines that are comments do not count.
    @Test func noBarePrintInTheExecutable() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/phikit")
        let files = try #require(FileManager.default.enumerator(atPath: sources.path))
        var offenders: [String] = []
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(
                contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for (n, line) in text.split(separator: "\n", omittingEmptySubsequences: false)
                .enumerated()
            {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard !code.hasPrefix("//"), !code.contains("func print("),
                    let r = code.range(of: "print(")
                else { continue }
                let before = code[..<r.lowerBound].last
                if before == nil || !(before!.isLetter || before!.isNumber || before! == ".") {
                    offenders.append("\(file):\(n + 1): \(code)")
                }
            }
        }
        #expect(offenders.isEmpty, "\(offenders.joined(separator: "\n"))")
    }
}

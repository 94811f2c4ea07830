import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs phikit on hostile input and checks issue 17's contract: it ends by itself within
/// `timeout` (else it is killed and the test fails: a hang), by exiting — never by a signal —
/// with a status of 1…127 and an `error:` line on stderr.
enum Hostile {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
        timeout: Double = 60, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Outcome {
        let process = Process()
        process.executableURL = try #require(Phikit.url)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment
            .merging(["NO_COLOR": "1"]) { $1 }.merging(environment) { $1 }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = Pipe()
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        let collected = Collected(out: out.fileHandleForReading, err: err.fileHandleForReading)
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record(
                "phikit \(arguments.joined(separator: " ")) hung (killed after \(timeout) s)",
                sourceLocation: sourceLocation)
        }
        process.waitUntilExit()
        let (stdout, stderr) = collected.finish()
        return Outcome(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// The contract for input that must be refused.
    static func expectRefused(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
        timeout: Double = 60, status: Int32? = nil, mentioning: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let r = try run(
            arguments, environment: environment, stdin: stdin, timeout: timeout,
            sourceLocation: sourceLocation)
        let what = arguments.joined(separator: " ")
        #expect(
            (1...127).contains(r.status), "\(what): exit \(r.status)",
            sourceLocation: sourceLocation)
        #expect(
            r.stderr.split(separator: "\n").contains { $0.hasPrefix("error: ") },
            "\(what): no error line in \(r.stderr)", sourceLocation: sourceLocation)
        #expect(
            !r.stderr.contains("internal error"), "\(what): \(r.stderr)",
            sourceLocation: sourceLocation)
        if let status {
            #expect(r.status == status, "\(what): \(r.stderr)", sourceLocation: sourceLocation)
        }
        if let mentioning {
            #expect(
                r.stderr.contains(mentioning), "\(what): \(r.stderr)",
                sourceLocation: sourceLocation)
        }
    }

    /// A scratch copy of the bundled stories-260k model (a real, runnable model).
    static func storiesCopy() throws -> URL {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("models/stories-260k")
        let dir = try TinyModel.temporaryDirectory().appendingPathComponent("stories")
        try FileManager.default.copyItem(at: source, to: dir)
        return dir
    }
}

/// Reads stdout and stderr to their ends on background threads (a full pipe would block the
/// child, which would then look like a hang).
private final class Collected: @unchecked Sendable {
    private var out = Data()
    private var err = Data()
    private let done = DispatchGroup()

    init(out: FileHandle, err: FileHandle) {
        done.enter()
        done.enter()
        Thread.detachNewThread { [self] in
            self.out = out.readDataToEndOfFile()
            done.leave()
        }
        Thread.detachNewThread { [self] in
            self.err = err.readDataToEndOfFile()
            done.leave()
        }
    }

    func finish() -> (String, String) {
        done.wait()
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

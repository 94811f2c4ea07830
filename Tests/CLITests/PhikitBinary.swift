import Foundation

/// Runs the built `phikit` executable and captures what it printed.
struct PhikitResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

enum Phikit {
    /// The `phikit` binary of the build being tested. `swift test` runs the test bundle from
    /// the products directory (`<scratch>/<triple>/debug/`), where `phikit` sits beside it;
    /// `PHIKIT_BINARY` overrides, and the repo's `.build*/debug/phikit` is the last resort.
    static let url: URL? = {
        let fm = FileManager.default
        if let override = ProcessInfo.processInfo.environment["PHIKIT_BINARY"] {
            return URL(fileURLWithPath: override)
        }
        var candidates: [URL] = []
        // The running test executable (Linux: …/debug/phikitPackageTests.xctest).
        let selfExe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        candidates.append(selfExe.deletingLastPathComponent())
        // macOS: …/debug/phikitPackageTests.xctest/Contents/MacOS/… inside the bundle.
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            candidates.append(bundle.bundleURL.deletingLastPathComponent())
        }
        candidates.append(Bundle.main.bundleURL)
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent())
        for dir in candidates {
            let binary = dir.appendingPathComponent("phikit")
            if fm.isExecutableFile(atPath: binary.path) { return binary }
        }
        // Fall back to the newest `.build*/debug/phikit` under the repository root.
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let scratch = (try? fm.contentsOfDirectory(atPath: root.path)) ?? []
        let found = scratch.filter { $0.hasPrefix(".build") }
            .map { root.appendingPathComponent($0).appendingPathComponent("debug/phikit") }
            .filter { fm.isExecutableFile(atPath: $0.path) }
        return found.max { modified($0) < modified($1) }
    }()

    private static func modified(_ url: URL) -> Date {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        return attributes?[.modificationDate] as? Date ?? .distantPast
    }

    static func run(
        _ arguments: String..., environment: [String: String] = [:]
    ) throws
        -> PhikitResult
    {
        try run(arguments, environment: environment)
    }

    /// `stdin`: text fed to phikit's standard input (default: /dev/null); `binary`: a copy of
    /// phikit to run instead (e.g. one moved away from its registry).
    static func run(
        _ arguments: [String], environment: [String: String] = [:], stdin: String? = nil,
        binary: URL? = nil
    ) throws
        -> PhikitResult
    {
        guard let url = binary ?? url else { throw MissingBinary() }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let input = stdin.map { _ in Pipe() }
        process.standardInput = input ?? FileHandle.nullDevice
        try process.run()
        if let input, let stdin {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try input.fileHandleForWriting.close()
        }
        // Drain both pipes before waiting: a full pipe would block the child forever.
        let errData = ErrorReader(err.fileHandleForReading)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return PhikitResult(
            status: process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self),
            stderr: String(decoding: errData.finish(), as: UTF8.self))
    }

    struct MissingBinary: Error, CustomStringConvertible {
        var description: String {
            "phikit binary not found; build it (swift build) or set PHIKIT_BINARY"
        }
    }
}

/// Reads a pipe to its end on a background thread.
private final class ErrorReader: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func finish() -> Data {
        done.wait()
        return data
    }
}

import Foundation
import TestIsolation

/// Where the tests find what they read in place: the repository (the bundled demo model,
/// registry.json) and the fixtures every test target shares, `Tests/Fixtures` (real Phi
/// tokenizers and configs; see its PROVENANCE.md). Every test target asks here, so the paths
/// are computed once. Nothing outside the repository is read.
///
/// The repository stores large fixtures gzip'ed and shared files as symlinks;
/// `scripts/fixtures.sh` turns the tree into plain files under `.build/fixtures/` once, and
/// `shared(_:)` answers paths in that copy. A fixture that is not there throws
/// `MissingFixture`: the test fails saying which one, it never passes by skipping its checks.
public enum TestPaths {
    /// `<repo>` (this file is `<repo>/Tests/TestSupport/TestPaths.swift`).
    public static let repository: URL = URL(fileURLWithPath: #filePath)
        .resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `<repo>/Tests/Fixtures` as the repository stores it (compressed, with links).
    public static let storedFixtures: URL = repository.appendingPathComponent("Tests/Fixtures")

    /// The readable copy of `storedFixtures` that `scripts/fixtures.sh` prints, or why there
    /// is none.
    public static let sharedFixtures: Result<URL, MissingFixture> = {
        let script = repository.appendingPathComponent("scripts/fixtures.sh").path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch {
            return .failure(MissingFixture(path: storedFixtures.path, reason: "\(error)"))
        }
        let path = out.fileHandleForReading.readDataToEndOfFile()
        let message = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return .failure(
                MissingFixture(
                    path: storedFixtures.path,
                    reason: "scripts/fixtures.sh failed: "
                        + String(decoding: message, as: UTF8.self)))
        }
        let text = String(decoding: path, as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return .success(URL(fileURLWithPath: text))
    }()

    /// `<repo>/models/stories-260k`, the bundled demo model.
    public static let storiesModel: URL = repository.appendingPathComponent("models/stories-260k")

    /// `<repo>/registry.json`.
    public static let registry: URL = repository.appendingPathComponent("registry.json")

    /// The path of `relative` inside the fixtures (`Tests/Fixtures`, with `NAME.gz` read as
    /// `NAME`); throws `MissingFixture` when there is no such file or directory.
    public static func shared(_ relative: String) throws -> String {
        try sharedURL(relative).path
    }

    public static func sharedURL(_ relative: String) throws -> URL {
        let url = try sharedFixtures.get().appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MissingFixture(
                path: storedFixtures.appendingPathComponent(relative).path,
                reason: "no such fixture")
        }
        return url
    }
}

/// A fixture a test needs is not there.
public struct MissingFixture: Error, CustomStringConvertible {
    public var path: String
    public var reason: String

    public init(path: String, reason: String = "no such fixture") {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        "missing test fixture \(path) (\(reason)); the tests read Tests/Fixtures of the "
            + "repository through scripts/fixtures.sh"
    }
}

extension TestPaths {
    /// The private folder this test process runs in: HOME is `<it>/home`, TMPDIR `<it>/tmp`
    /// (Tests/TestIsolation sets them before any test runs and removes the folder at exit).
    public static var privateRoot: String { String(cString: pk_test_private_root()) }
}

import Foundation

/// Where the tests find what they read in place: the repository (the bundled demo model,
/// registry.json) and `../shared/fixtures` beside it (real Phi tokenizers and configs, never
/// copied into the project). Every test target asks here, so the path is computed once.
///
/// A test that needs a shared fixture asks through `shared(_:)`, which throws `MissingFixture`
/// when it is not there: the test fails saying which fixture is missing, it never passes by
/// skipping its checks.
public enum TestPaths {
    /// `<repo>` (this file is `<repo>/Tests/TestSupport/TestPaths.swift`).
    public static let repository: URL = URL(fileURLWithPath: #filePath)
        .resolvingSymlinksInPath().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// `<repo>/../shared/fixtures`; `PHIKIT_SHARED_FIXTURES` points elsewhere.
    public static let sharedFixtures: URL = {
        if let dir = ProcessInfo.processInfo.environment["PHIKIT_SHARED_FIXTURES"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        return repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures")
    }()

    /// `<repo>/models/stories-260k`, the bundled demo model.
    public static let storiesModel: URL = repository.appendingPathComponent("models/stories-260k")

    /// `<repo>/registry.json`.
    public static let registry: URL = repository.appendingPathComponent("registry.json")

    /// The path of `relative` inside ../shared/fixtures; throws `MissingFixture` when there is
    /// no such file or directory.
    public static func shared(_ relative: String) throws -> String {
        try sharedURL(relative).path
    }

    public static func sharedURL(_ relative: String) throws -> URL {
        let url = sharedFixtures.appendingPathComponent(relative)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw MissingFixture(path: url.path)
        }
        return url
    }
}

/// A fixture a test needs is not on this machine.
public struct MissingFixture: Error, CustomStringConvertible {
    public var path: String

    public init(path: String) { self.path = path }

    public var description: String {
        "missing test fixture \(path): the tests read ../shared/fixtures beside the repository "
            + "(PHIKIT_SHARED_FIXTURES overrides its location); this test cannot run without it"
    }
}

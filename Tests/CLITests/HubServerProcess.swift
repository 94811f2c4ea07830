import Foundation
import HubTestSupport

/// The Hub look-alike (HubTestSupport's `HubTestServer`) set up for the command-line tests:
/// one repo, `org/model` at one commit — by default HubTestSupport's `Fixture` files (three
/// JSON files, a README and a 1 MB LFS weight file) — plus a cache, store and config directory
/// of its own for the phikit runs (`environment`).
final class HubServerProcess {
    static let repoID = Fixture.repoID
    static let commit = Fixture.commit
    static let weights = Fixture.weights
    static let weightsSHA256 = Fixture.weightsSHA256

    /// Holds the cache, store and config directories of the phikit runs.
    let root: URL
    private let server: HubTestServer

    /// `gatedToken`: the repo answers 401/403 unless this token is sent. `model`: serve the
    /// files of this directory instead (safetensors in LFS), e.g. a `TinyModel`.
    init(gatedToken: String? = nil, model: URL? = nil) throws {
        var files = Fixture.files
        if let model {
            files = try FileManager.default.contentsOfDirectory(atPath: model.path).sorted().map {
                HubTestServer.File(
                    path: $0, bytes: Array(try Data(contentsOf: model.appendingPathComponent($0))),
                    lfs: $0.hasSuffix(".safetensors"))
            }
        }
        server = try HubTestServer(repos: [
            HubTestServer.Repo(
                id: Self.repoID, refs: ["main": Self.commit], commits: [Self.commit: files],
                gatedToken: gatedToken)
        ])
        root = try TinyModel.temporaryDirectory()
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var endpoint: String { server.endpoint }

    /// The environment of a phikit run against this server, with its own cache and store.
    var environment: [String: String] {
        [
            "HF_ENDPOINT": endpoint, "HF_HUB_CACHE": root.appendingPathComponent("cache").path,
            "PHIKIT_HOME": root.appendingPathComponent("store").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "HF_TOKEN": "", "HF_HOME": root.appendingPathComponent("hf-home").path,
            "PHIKIT_RETRY_BASE_SECONDS": "0.01",
        ]
    }

    var repoDirectory: URL { root.appendingPathComponent("cache/models--org--model") }
    var snapshot: String { repoDirectory.appendingPathComponent("snapshots/" + Self.commit).path }

    func setFaults(_ json: String) throws { try server.setFaults(json) }
    var requests: [HubTestServer.Request] { server.requests }
    func clearLog() { server.clearLog() }
}

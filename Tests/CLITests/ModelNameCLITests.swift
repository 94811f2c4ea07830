import Foundation
import TestSupport
import Testing

/// One way to name a model everywhere: every command that takes MODEL (inspect included)
/// resolves a directory, a registry alias or a Hub id alike, suggests the nearest known name
/// for a typo, says how to get a model that is not here in the words the user typed, and
/// `convert ORG/NAME` pulls its source first.
@Suite("MODEL names across commands")
struct ModelNameCLITests {
    /// A cache and store of their own, empty.
    static func emptyMachine() throws -> [String: String] {
        let root = try TinyModel.temporaryDirectory()
        return [
            "HF_HUB_CACHE": root.appendingPathComponent("cache").path,
            "PHIKIT_HOME": root.appendingPathComponent("store").path,
            "XDG_CONFIG_HOME": root.appendingPathComponent("config").path,
            "HF_HUB_OFFLINE": "1",
        ]
    }

    @Test(
        "a mistyped alias gets 'did you mean' from the registry, whatever the command",
        arguments: [
            ["run", "storis-260k", "hi"], ["verify", "storis-260k"], ["inspect", "storis-260k"],
            ["tokenize", "storis-260k", "hi"], ["chat", "storis-260k"],
            ["convert", "storis-260k", "-q"], ["pull", "storis-260k"], ["rm", "storis-260k", "-y"],
        ])
    func typo(_ arguments: [String]) throws {
        let r = try Phikit.run(arguments, environment: try Self.emptyMachine())
        #expect(r.status == 66, "\(r.stderr)")
        #expect(r.stderr.hasPrefix("error: 'storis-260k' is not a directory, a registry alias"))
        #expect(r.stderr.contains("hint: did you mean 'stories-260k'?"), "\(r.stderr)")
    }

    /// Issue 27: run, chat and serve (which would download a missing Hub model) said only
    /// "HF_HUB_OFFLINE is set" for a typo of a model in the cache.
    @Test(
        "a mistyped Hub id of a cached model gets 'did you mean' under HF_HUB_OFFLINE",
        arguments: [
            ["run", "org/tiny-modle", "hi"], ["chat", "org/tiny-modle"],
            ["serve", "org/tiny-modle"], ["verify", "org/tiny-modle"],
            ["inspect", "org/tiny-modle"],
        ])
    func typoOfCachedHubModel(_ arguments: [String]) throws {
        let environment = try Self.emptyMachine()
        let commit = String(repeating: "a", count: 40)
        let repo = URL(fileURLWithPath: environment["HF_HUB_CACHE"]!)
            .appendingPathComponent("models--org--tiny-model")
        let snapshot = repo.appendingPathComponent("snapshots/" + commit)
        try FileManager.default.createDirectory(at: snapshot, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: repo.appendingPathComponent("refs"), withIntermediateDirectories: true)
        try Data(commit.utf8).write(to: repo.appendingPathComponent("refs/main"))
        for file in try FileManager.default.contentsOfDirectory(atPath: TestPaths.storiesModel.path) {
            try FileManager.default.copyItem(
                at: TestPaths.storiesModel.appendingPathComponent(file),
                to: snapshot.appendingPathComponent(file))
        }
        let r = try Phikit.run(arguments, environment: environment)
        #expect(r.status == 66, "\(r.stderr)")
        #expect(r.stderr.contains("hint: did you mean 'org/tiny-model'?"), "\(r.stderr)")
        let ok = try Phikit.run(["inspect", "org/tiny-model"], environment: environment)
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test("a local model's name is suggested too")
    func typoOfLocalModel() throws {
        let environment = try Self.emptyMachine()
        let store = URL(fileURLWithPath: environment["PHIKIT_HOME"]! + "/models")
        try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            at: TestPaths.storiesModel, to: store.appendingPathComponent("my-tiny-model"))
        let r = try Phikit.run(["run", "my-tiny-modle", "hi"], environment: environment)
        #expect(r.stderr.contains("did you mean 'my-tiny-model'?"), "\(r.stderr)")
        let ok = try Phikit.run(["inspect", "my-tiny-model"], environment: environment)
        #expect(ok.status == 0, "\(ok.stderr)")
    }

    @Test(
        "verify, tokenize, inspect of a model not here: the hint pulls it by the name typed",
        arguments: ["verify", "tokenize", "inspect"])
    func notDownloaded(_ command: String) throws {
        let r = try Phikit.run([command, "phi-4-mini"], environment: try Self.emptyMachine())
        #expect(r.status == 66)
        #expect(r.stderr.hasPrefix("error: model 'phi-4-mini' ("), "\(r.stderr)")
        #expect(r.stderr.contains("is not downloaded"))
        #expect(r.stderr.contains("hint: run `phikit pull phi-4-mini` first"), "\(r.stderr)")
    }

    @Test("inspect takes a registry alias as run does")
    func inspectAlias() throws {
        let byName = try Phikit.run(["inspect", "stories-260k", "--json"])
        let byPath = try Phikit.run(["inspect", TestPaths.storiesModel.path, "--json"])
        #expect(byName.status == 0, "\(byName.stderr)")
        let a = try JSONSerialization.jsonObject(with: Data(byName.stdout.utf8)) as? [String: Any]
        let b = try JSONSerialization.jsonObject(with: Data(byPath.stdout.utf8)) as? [String: Any]
        #expect(a?["parameter_count"] as? Int == b?["parameter_count"] as? Int)
        #expect((a?["parameter_count"] as? Int ?? 0) > 0)
    }

    @Test("convert ORG/NAME pulls the source first (pull's plan line), then converts it")
    func convertPullsSource() throws {
        let hub = try HubServerProcess(model: TestPaths.storiesModel)
        let out = hub.root.appendingPathComponent("out")
        let r = try Phikit.run(
            ["convert", "org/model", "-q", "-o", out.path], environment: hub.environment)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("pulling org/model@main (ccccccc)"), "\(r.stderr)")
        #expect(FileManager.default.fileExists(atPath: hub.snapshot + "/model.safetensors"))
        #expect(FileManager.default.fileExists(atPath: out.path + "/model.safetensors"))
        // Now cached: the second conversion downloads nothing.
        hub.clearLog()
        let again = try Phikit.run(
            ["convert", "org/model", "-q", "-o", out.path, "--force"], environment: hub.environment)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(!again.stderr.contains("pulling"))
        #expect(hub.requests.isEmpty)
        // Offline, a source that is not cached is not fetched.
        var offline = hub.environment
        offline["HF_HUB_OFFLINE"] = "1"
        offline["HF_HUB_CACHE"] = hub.root.appendingPathComponent("other-cache").path
        let refused = try Phikit.run(["convert", "org/model", "-q"], environment: offline)
        #expect(refused.status == 66)
        #expect(refused.stderr.contains("hint: HF_HUB_OFFLINE is set"))
    }
}

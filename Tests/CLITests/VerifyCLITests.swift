import Foundation
import Testing

/// `phikit verify` end to end: a model pulled from the test Hub (stories-260k converted to
/// 4-bit by phikit itself) verifies against the listing pull saved, or the one the Hub gives
/// when it is gone; breaking it exits 1 naming the file; what cannot be checked exits 66/69.
@Suite("phikit verify")
struct VerifyCLITests {
    /// A 4-bit conversion of the bundled model, without convert's manifest (the Hub has none).
    static func convertedModel() throws -> URL {
        let work = try TinyModel.temporaryDirectory()
        let out = work.appendingPathComponent("Stories-4bit")
        let r = try Phikit.run("convert", "stories-260k", "-q", "-o", out.path)
        #expect(r.status == 0, "\(r.stderr)")
        try FileManager.default.removeItem(at: out.appendingPathComponent(".phikit-manifest.json"))
        return out
    }

    /// The hub serving the converted model, and the model pulled into its cache.
    static func pulledModel() throws -> HubServerProcess {
        let hub = try HubServerProcess(model: try convertedModel())
        let pull = try Phikit.run(["pull", "org/model"], environment: hub.environment)
        #expect(pull.status == 0, "\(pull.stderr)")
        return hub
    }

    @Test("a pulled model verifies against the saved listing: exit 0, one line per layer")
    func intact() throws {
        let hub = try Self.pulledModel()
        let r = try Phikit.run(["verify", "org/model"], environment: hub.environment)
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("bytes      passed"))
        #expect(r.stdout.contains("Hub's listing of cccccccc"))
        #expect(r.stdout.contains("OK: 0 errors"))
        #expect(r.stderr.isEmpty)
    }

    @Test("a flipped byte in a blob: exit 1, the file named, the report in JSON")
    func flippedByte() throws {
        let hub = try Self.pulledModel()
        let shard = URL(fileURLWithPath: hub.snapshot + "/model.safetensors")
        var bytes = try Data(contentsOf: shard)
        bytes[bytes.count - 10] ^= 0x01
        try bytes.write(to: shard.resolvingSymlinksInPath())
        let r = try Phikit.run(["verify", "org/model"], environment: hub.environment)
        #expect(r.status == 1)
        #expect(r.stdout.contains("error: bytes: model.safetensors: sha256 is "))
        #expect(r.stderr.hasPrefix("error: ") && r.stderr.contains("verify found 1 problem"))
        let json = try Phikit.run(["verify", "org/model", "--json"], environment: hub.environment)
        #expect(json.status == 1)
        let report = try #require(
            try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        #expect(report["passed"] as? Bool == false)
        let findings = try #require(report["findings"] as? [[String: Any]])
        #expect(findings.first?["code"] as? String == "hash_mismatch")
        #expect(findings.first?["file"] as? String == "model.safetensors")
    }

    @Test("without a saved listing: fetched from the Hub, or 69 when it is down, or offline")
    func listing() throws {
        let hub = try Self.pulledModel()
        let trees = hub.repoDirectory.appendingPathComponent("trees")
        try FileManager.default.removeItem(at: trees)
        let online = try Phikit.run(
            ["verify", "org/model", "--json"], environment: hub.environment)
        #expect(online.status == 0, "\(online.stderr)")
        #expect(online.stdout.contains(#""reference" : "hub_api""#))

        var down = hub.environment
        down["HF_ENDPOINT"] = "http://127.0.0.1:9"
        down["PHIKIT_RETRY_BASE_SECONDS"] = "0"
        let unreachable = try Phikit.run(["verify", "org/model"], environment: down)
        #expect(unreachable.status == 69, "\(unreachable.stderr)")
        #expect(unreachable.stderr.hasPrefix("error: "))

        let offline = try Phikit.run(["verify", "org/model", "--offline"], environment: down)
        #expect(offline.status == 0, "\(offline.stderr)")
        #expect(offline.stdout.contains("warning: bytes: no saved file list"))
    }

    @Test("a deleted shard link: exit 1 naming it in bytes and structure")
    func deletedShard() throws {
        let hub = try Self.pulledModel()
        try FileManager.default.removeItem(atPath: hub.snapshot + "/model.safetensors")
        let r = try Phikit.run(["verify", "org/model"], environment: hub.environment)
        #expect(r.status == 1)
        #expect(r.stdout.contains("error: bytes: model.safetensors: is in the Hub's listing"))
        #expect(r.stdout.contains("error: structure: model.safetensors: is named by"))
    }

    @Test("--smoke on stories-260k matches the registry's fingerprint")
    func smoke() throws {
        let r = try Phikit.run("verify", "stories-260k", "--smoke")
        #expect(r.status == 0, "\(r.stdout)\(r.stderr)")
        #expect(r.stdout.contains("matches the registry's fingerprint"))
    }

    @Test("a model that is not there: 66; a bad flag: 64")
    func cannotCheck() throws {
        let missing = try Phikit.run("verify", "/nonexistent/model-dir")
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("error: "))
        let usage = try Phikit.run("verify", "stories-260k", "--fast")
        #expect(usage.status == 64)
    }
}

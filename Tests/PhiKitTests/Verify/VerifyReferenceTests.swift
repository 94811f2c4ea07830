import Foundation
import PhiFormats
import PhiHub
import Testing

@testable import PhiKit

/// What the bytes are checked against besides a saved listing and a manifest — each blob's own
/// name offline, the registry's pinned size — and the findings of files nobody listed and of a
/// chat template that does not render.
@Suite("verify references and extra findings")
struct VerifyReferenceTests {
    typealias F = VerifyFixture

    @Test("offline without a listing: each blob against its name; a corrupt one is named")
    func blobNames() throws {
        let work = try F.temporaryDirectory("blob-names")
        var files = try HandMadeCache.files(of: try F.converted.get())
        files[ConvertManifest.fileName] = nil
        let snapshot = try HandMadeCache.add(
            files, repoID: F.repoID, commit: F.commit, root: work.appendingPathComponent("hub"),
            writeListing: false)
        let intact = try F.verify(F.repoID, work: work)
        #expect(intact.passed && intact.reference == "blob_names")
        #expect(intact.findings.map(\.code) == ["no_listing"])

        let config = snapshot.appendingPathComponent("config.json")
        let text = try String(contentsOf: config, encoding: .utf8)
        try text.replacingOccurrences(of: "\"silu\"", with: "\"gelu\"")
            .write(to: config.resolvingSymlinksInPath(), atomically: false, encoding: .utf8)
        let broken = try F.verify(F.repoID, work: work)
        #expect(broken.findings("corrupt_blob").map(\.file) == ["config.json"])
        #expect(!broken.passed)
    }

    @Test("a registry entry pinned to the snapshot's commit: its download size is checked")
    func registryPin() throws {
        let (work, _) = try F.snapshot("pin")
        let listed = try #require(
            HubCacheListing.total(work.appendingPathComponent("hub"), F.repoID, F.commit))
        for (size, passes) in [(listed, true), (listed + 1, false)] {
            let registry = work.appendingPathComponent("registry-\(size).json")
            try Data(
                """
                {"models": [{"name": "tiny-pinned", "repo": "\(F.repoID)",
                  "revision": "\(F.commit)", "downloadSize": \(size)}]}
                """.utf8
            ).write(to: registry)
            var environment = F.environment(work)
            environment["PHIKIT_REGISTRY"] = registry.path
            var options = VerifyOptions(model: "tiny-pinned", environment: environment)
            options.offline = true
            options.threads = 2
            let report = try PhiKit.verify(options)
            #expect(report.passed == passes, "\(report.findings)")
            if !passes {
                #expect(report.findings("registry_size").map(\.file) == [registry.path])
            }
        }
    }

    @Test("an extra weight file: not in the manifest, and mlx_lm would load it")
    func extraWeights() throws {
        let model = try F.convertedCopy("extra")
        let shard = try F.shard(of: "model.norm.weight", in: model)
        try FileManager.default.copyItem(
            at: model.appendingPathComponent(shard),
            to: model.appendingPathComponent("model-extra.safetensors"))
        let report = try F.verify(model)
        #expect(report.findings("extra_file").map(\.file) == ["model-extra.safetensors"])
        #expect(report.findings("stray_shard").map(\.file) == ["model-extra.safetensors"])
        #expect(!report.passed)
    }

    @Test("a chat template that does not parse is a text finding on its file")
    func brokenChatTemplate() throws {
        let model = try F.convertedCopy("template")
        try Data("{% for m in messages %}{{ m.content }".utf8)
            .write(to: model.appendingPathComponent("chat_template.jinja"))
        let report = try F.verify(model)
        let found = report.findings.filter { $0.layer == .text }
        #expect(found.count == 1)
        #expect(found.first?.file == "chat_template.jinja")
        #expect(
            ["invalid_chat_template", "chat_template_render"].contains(found.first?.code ?? ""))
        #expect(!report.passed)
    }
}

/// The bytes a default pull of a hand-made snapshot adds up to (the files the default patterns
/// take; README.md is not one), from its saved listing.
enum HubCacheListing {
    static func total(_ root: URL, _ repoID: String, _ commit: String) -> Int? {
        let path = root.appendingPathComponent(
            "models--" + repoID.replacingOccurrences(of: "/", with: "--") + "/trees/\(commit).json")
        guard let data = FileManager.default.contents(atPath: path.path),
            let files = (try? JSONValue(parsing: data))?["files"]?.objectValue
        else { return nil }
        return files.filter { FilePatterns.mlxDefaults.matches($0.key) }
            .reduce(0) { $0 + ($1.value["size"]?.intValue ?? 0) }
    }
}

import Foundation
import HubTestSupport
import Testing
import TestSupport

/// `phikit push` and `convert --upload-repo` from the built binary against the Hub
/// look-alike's write side.
@Suite("phikit push")
struct PushCLITests {
    @Test("convert --upload-repo pushes the output with a model card; pull reads it back; push again is up to date")
    func convertAndUpload() throws {
        let hub = try HubServerProcess()
        var env = hub.environment
        env["HF_TOKEN"] = "hf_write_cli"
        let out = hub.root.appendingPathComponent("stories-4bit").path
        let r = try Phikit.run(
            ["convert", TestPaths.storiesModel.path, "-q", "--group-size", "32", "-o", out,
             "--upload-repo", "me/stories-4bit"], environment: env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("/me/stories-4bit/commit/"))
        #expect(r.stderr.contains("created me/stories-4bit"))
        #expect(!r.stderr.contains("hf_write_cli") && !r.stdout.contains("hf_write_cli"))
        let card = try String(contentsOfFile: out + "/README.md", encoding: .utf8)
        #expect(card.contains("library_name: mlx") && card.contains("# me/stories-4bit"))
        #expect(card.contains("quantized to 4-bit affine (group size 32)"))

        let pulled = try Phikit.run(["pull", "me/stories-4bit", "--include", "*"], environment: env)
        #expect(pulled.status == 0, "\(pulled.stderr)")
        let snapshot = pulled.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        // Hidden files (convert's .phikit-manifest.json) stay home.
        for name in try FileManager.default.contentsOfDirectory(atPath: out) where !name.hasPrefix(".") {
            let sent = FileManager.default.contents(atPath: out + "/" + name)
            #expect(sent != nil && sent == FileManager.default.contents(atPath: snapshot + "/" + name),
                    "\(name) differs after the round trip")
        }
        #expect(!FileManager.default.fileExists(atPath: snapshot + "/.phikit-manifest.json"))

        let again = try Phikit.run(["push", out, "me/stories-4bit", "--json"], environment: env)
        #expect(again.status == 0)
        #expect(again.stderr.contains("up to date"))
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(again.stdout.utf8)) as? [String: Any])
        #expect(object["commit"] == nil)
    }

    @Test("no token, a bad repo id, a missing folder: one error line, a hint, the right exit code")
    func badInput() throws {
        let hub = try HubServerProcess()
        let noToken = try Phikit.run(
            ["push", TestPaths.storiesModel.path, "me/x"], environment: hub.environment)
        #expect(noToken.status == 64)
        #expect(noToken.stderr.hasPrefix("error: pushing to 'me/x' needs a Hub token with write access\n"))
        #expect(noToken.stderr.contains("hint: set HF_TOKEN"))
        #expect(hub.requests.isEmpty)

        var env = hub.environment
        env["HF_TOKEN"] = "hf_write_cli"
        let badID = try Phikit.run(["push", TestPaths.storiesModel.path, "not-a-repo"], environment: env)
        #expect(badID.status == 64)
        #expect(badID.stderr.hasPrefix("error: 'not-a-repo' is not a Hub repo id"))
        let missing = try Phikit.run(["push", hub.root.path + "/nowhere", "me/x"], environment: env)
        #expect(missing.status == 66)
        #expect(missing.stderr.hasPrefix("error: "))

        env["HF_TOKEN"] = "hf_read_secret"
        let readOnly = try Phikit.run(["push", TestPaths.storiesModel.path, "me/x"], environment: env)
        #expect(readOnly.status == 69)
        #expect(!readOnly.stderr.contains("hf_read_secret"))
    }
}

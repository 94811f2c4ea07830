import Foundation
import Testing

/// `inspect` and `run` given a GGUF file (the real stories260K from llama.cpp's CI).
@Suite("phikit with GGUF files")
struct GGUFCLITests {
    static let stories: String = {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return repo.deletingLastPathComponent().path
            + "/shared/fixtures/karpathy--tinyllamas/stories260K.gguf"
    }()

    @Test func inspectSummarisesTheModel() throws {
        let r = try Phikit.run("inspect", Self.stories)
        #expect(r.status == 0, "\(r.stderr)")
        let lines = r.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("NAME") == true)
        #expect(lines.contains { $0.hasPrefix("token_embd.weight") && $0.contains("F32") && $0.contains("[512, 64]") })
        #expect(lines.contains("model:        llama (llama), 5 layers, hidden 64, feed-forward 172, 8 heads, 4 kv heads"))
        #expect(lines.contains("tokenizer:    llama, 512 tokens, chat template absent"))
        #expect(lines.last == "48 tensors (48 F32), 292,800 parameters, 1.17 MB; GGUF v3")
    }

    @Test func inspectJSON() throws {
        let r = try Phikit.run("inspect", Self.stories, "--json")
        #expect(r.status == 0, "\(r.stderr)")
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any])
        #expect(object["kind"] as? String == "gguf")
        #expect(object["version"] as? Int == 3)
        let model = try #require(object["model"] as? [String: Any])
        #expect(model["architecture"] as? String == "llama")
        #expect(model["head_count_kv"] as? Int == 4)
        #expect(model["tokenizer_model"] as? String == "llama")
        #expect((object["tensors"] as? [Any])?.count == 48)
        #expect((object["type_counts"] as? [String: Int]) == ["F32": 48])
    }

    @Test func corruptFileIsOneErrorLine() throws {
        let path = FileManager.default.temporaryDirectory.path + "/phikit-bad-\(UUID()).gguf"
        defer { try? FileManager.default.removeItem(atPath: path) }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.stories)).prefix(4096))
        bytes[23] = 0x7f  // metadata count: far more than the file holds
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = try Phikit.run("inspect", path)
        #expect(r.status == 65)
        #expect(r.stderr.hasPrefix("error: \(path): metadata count is "), "\(r.stderr)")
    }

    @Test func runSaysToConvert() throws {
        let r = try Phikit.run("run", Self.stories, "-p", "hi")
        #expect(r.status == 64)
        #expect(r.stderr.contains("is a GGUF file (llama.cpp's format), not an MLX model directory"))
        #expect(r.stderr.contains("hint: convert it first: phikit convert \(Self.stories)"))
    }
}

extension GGUFCLITests {
    /// Converted (to llama), the GGUF tells the same story as the reference phi3 conversion:
    /// the llama engine on one, phi3's on the other, the same bytes.
    @Test func convertedModelTellsTheSameStory() throws {
        let out = FileManager.default.temporaryDirectory.path + "/phikit-gguf-\(UUID())"
        defer { try? FileManager.default.removeItem(atPath: out) }
        let c = try Phikit.run("convert", Self.stories, "-o", out, "--exact")
        #expect(c.status == 0, "\(c.stderr)")
        #expect(c.stdout.contains("Exact: 48 F32 GGUF tensors."))
        let reference = Self.stories.replacingOccurrences(
            of: "karpathy--tinyllamas/stories260K.gguf", with: "karpathy--stories260K-phi3")
        let a = try Phikit.run("run", out, "-p", "Once upon a time", "-m", "60")
        let b = try Phikit.run("run", reference, "-p", "Once upon a time", "-m", "60")
        #expect(a.status == 0 && b.status == 0, "\(a.stderr)\(b.stderr)")
        #expect(a.stdout.hasPrefix(", there was a little girl named Lily."))
        #expect(a.stdout == b.stdout)
    }
}

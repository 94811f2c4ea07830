import Foundation
import PhiKit
import Testing

/// `phikit convert` through the built binary: exit codes, stdout summary, `--json`.
@Suite("phikit convert (binary)")
struct ConvertCLITests {
    /// The `phikit` next to the test bundle (`PHIKIT_BINARY` overrides).
    static let binary: URL? = {
        if let path = ProcessInfo.processInfo.environment["PHIKIT_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        let dir = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            .deletingLastPathComponent()
        for candidate in [
            dir, Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent(),
        ] {
            let url = candidate.appendingPathComponent("phikit")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    static func run(
        _ args: [String], env: [String: String] = [:]
    ) throws -> (status: Int32, out: String, err: String) {
        let binary = try #require(binary, "phikit binary not found; set PHIKIT_BINARY")
        let p = Process()
        p.executableURL = binary
        p.arguments = args
        p.environment = ProcessInfo.processInfo.environment.merging(
            env.merging(["NO_COLOR": "1"]) { $1 }
        ) { $1 }
        let work = try ConvertFixtures.temporaryDirectory("cli-io")
        defer { try? FileManager.default.removeItem(at: work) }
        // Files, not pipes: no risk of a full pipe blocking the child.
        let outURL = work.appendingPathComponent("out")
        let errURL = work.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        p.standardOutput = try FileHandle(forWritingTo: outURL)
        p.standardError = try FileHandle(forWritingTo: errURL)
        p.standardInput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return (
            p.terminationStatus, try String(contentsOf: outURL, encoding: .utf8),
            try String(contentsOf: errURL, encoding: .utf8)
        )
    }

    @Test(.enabled(if: binary != nil)) func exitCodes() throws {
        let work = try ConvertFixtures.temporaryDirectory("cli")
        defer { try? FileManager.default.removeItem(at: work) }
        let src = work.appendingPathComponent("src")
        try ConvertFixtures.buildSource("phi4-bf16", into: src)
        let out = work.appendingPathComponent("out").path

        let ok = try Self.run([
            "convert", src.path, "-o", out, "-q", "--bits", "4", "--group-size", "64",
        ])
        #expect(ok.status == 0, "stderr: \(ok.err)")
        #expect(ok.out.contains("Quantized model with 6.323 bits per weight."))
        #expect(ok.err.isEmpty)  // progress only on a terminal

        let exists = try Self.run(["convert", src.path, "-o", out, "-q"])
        #expect(exists.status == 64 && exists.err.contains("already exists"))

        let json = try Self.run([
            "convert", src.path, "-o", out, "--force", "--json", "--q-bits", "8", "-q",
        ])
        #expect(json.status == 0)
        let summary = try JSONSerialization.jsonObject(with: Data(json.out.utf8)) as? [String: Any]
        #expect(summary?["bits"] as? Int == 8)
        #expect(summary?["output_directory"] as? String == out)

        let badBits = try Self.run(["convert", src.path, "-o", out + "2", "-q", "--bits", "7"])
        #expect(badBits.status == 64)
        let badFlag = try Self.run(["convert", src.path, "--bits", "4"])
        #expect(badFlag.status == 64 && badFlag.err.contains("-q"))

        let missing = try Self.run([
            "convert", work.appendingPathComponent("nope").path, "-o", out + "3",
        ])
        #expect(missing.status == 66)

        var config = try String(
            contentsOf: src.appendingPathComponent("config.json"), encoding: .utf8)
        config = config.replacingOccurrences(of: "\"phi3\"", with: "\"gemma\"")
        try config.write(
            to: src.appendingPathComponent("config.json"), atomically: true, encoding: .utf8)
        let gemma = try Self.run(["convert", src.path, "-o", out + "4", "-q"])
        #expect(gemma.status == 65 && gemma.err.contains("gemma"))
        #expect(!FileManager.default.fileExists(atPath: out + "4"))
    }

    /// An mlx_lm.convert command line works as it is: the source as --hf-path, the output as
    /// --mlx-path, --q-mode and --quant-predicate; bad combinations are usage errors.
    @Test(.enabled(if: binary != nil)) func mlxLMSpellings() throws {
        let work = try ConvertFixtures.temporaryDirectory("cli-mlx")
        defer { try? FileManager.default.removeItem(at: work) }
        let src = work.appendingPathComponent("src")
        try ConvertFixtures.buildSource("phi4-bf16", into: src)
        let out = work.appendingPathComponent("mx").path
        let mx = try Self.run([
            "convert", "--hf-path", src.path, "--mlx-path", out, "-q", "--q-mode", "mxfp4",
        ])
        #expect(mx.status == 0, "stderr: \(mx.err)")
        let config = try ConvertFixtures.json(URL(fileURLWithPath: out + "/config.json"))
        #expect(config["quantization"]?["mode"]?.stringValue == "mxfp4")
        #expect(config["quantization"]?["group_size"]?.intValue == 32)

        let mixed = try Self.run([
            "convert", "--model", src.path, "--mlx-path", out + "-mixed", "-q",
            "--quant-predicate", "mixed_3_6", "--dtype", "bfloat16",
        ])
        #expect(mixed.status == 0, "stderr: \(mixed.err)")

        let both = try Self.run([
            "convert", src.path, "-o", out + "2", "-q", "--q-mode", "nvfp4",
            "--quant-predicate", "mixed_2_6",
        ])
        #expect(both.status == 64 && both.err.contains("affine"))
        let groups = try Self.run([
            "convert", src.path, "-o", out + "3", "-q", "--q-mode", "mxfp8",
            "--q-group-size", "64",
        ])
        #expect(groups.status == 64 && groups.err.contains("mxfp8"))
        let recipe = try Self.run([
            "convert", src.path, "-o", out + "4", "-q",
            "--quant-predicate", "mixed_5_9",
        ])
        #expect(recipe.status == 64 && recipe.err.contains("--quant-predicate"))
    }
}

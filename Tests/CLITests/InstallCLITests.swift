import Foundation
import Testing

/// What a user meets right after installing: `version`, the environment `--help` documents,
/// a registry that cannot be found, and saying no to `rm`. (That the installed binary needs
/// no Swift toolchain is `make check-static`: it needs a release build, too slow for here.)
@Suite("install and first use")
struct InstallCLITests {
    @Test("`version` and `--version`: version, commit and this CPU's kernel path, on stdout")
    func version() throws {
        let long = try Phikit.run("version")
        #expect(long.status == 0)
        #expect(long.stderr.isEmpty)
        let lines = long.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(long.stdout)")
        #expect(lines.first?.hasPrefix("phikit 0.") == true)
        // A plain `swift build` embeds no commit; the Makefile passes a hex hash.
        let commit = try #require(lines.dropFirst().first)
        #expect(
            commit == "commit: unknown"
                || (commit.hasPrefix("commit: ")
                    && commit.dropFirst(8).allSatisfy { $0.isHexDigit }),
            "\(commit)")
        let kernels = try #require(lines.last)
        #expect(["kernels: AVX-512 VNNI", "kernels: AVX2", "kernels: portable"].contains(kernels))
        #if !arch(x86_64)
            #expect(kernels == "kernels: portable")
        #endif
        #expect(try Phikit.run("--version").stdout == long.stdout)
    }

    @Test("--help names every environment variable phikit reads")
    func environmentInHelp() throws {
        let help = try Phikit.run("--help").stdout
        for name in [
            "HF_HOME", "HF_HUB_CACHE", "HF_ENDPOINT", "HF_TOKEN", "HF_HUB_OFFLINE", "PHIKIT_HOME",
            "PHIKIT_REGISTRY", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "NO_COLOR",
        ] {
            #expect(help.contains(name), "--help lists \(name)")
        }
    }

    @Test("a binary away from its registry says registry.json is missing, where, and how")
    func registryNotFound() throws {
        let original = try #require(Phikit.url)
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("phikit-noregistry-\(UUID().uuidString)/bin")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let copy = dir.appendingPathComponent("phikit")
        try FileManager.default.copyItem(at: original, to: copy)
        let home = dir.deletingLastPathComponent().appendingPathComponent("home").path
        // Another test forking while the copy's write descriptor was open leaves that child
        // holding it until its exec: the kernel then refuses to run the copy (ETXTBSY) for a
        // moment. Retry briefly.
        var attempt = 0
        let r = try {
            while true {
                do {
                    return try Phikit.run(
                        ["run", "stories-260k", "-m", "1"],
                        environment: [
                            "HOME": home, "XDG_CONFIG_HOME": home,
                            "PHIKIT_REGISTRY": "", "PHIKIT_HOME": home,
                        ], binary: copy)
                } catch where "\(error)".contains("Text file busy") && attempt < 20 {
                    attempt += 1
                    usleep(100_000)
                }
            }
        }()
        #expect(r.status == 66)
        let shareDir = dir.deletingLastPathComponent().appendingPathComponent("share/phikit")
        #expect(r.stderr.contains("error: registry.json not found"), "\(r.stderr)")
        #expect(r.stderr.contains(shareDir.path + "/registry.json"), "\(r.stderr)")
        #expect(r.stderr.contains("PHIKIT_REGISTRY"))
        #expect(!r.stderr.contains("is not a directory, a registry alias"))
    }

    #if os(Linux)
        @Test("saying no to rm's question removes nothing, says so, and exits 0")
        func declineRemoval() throws {
            let home = try TinyModel.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: home) }
            let models = home.appendingPathComponent("models")
            try FileManager.default.createDirectory(at: models, withIntermediateDirectories: true)
            let model = models.appendingPathComponent("tiny-bf16")
            try FileManager.default.moveItem(at: try TinyModel.phi3Directory(), to: model)
            let t = try PseudoTerminal(
                ["rm", "tiny-bf16"], environment: ["PHIKIT_HOME": home.path])
            try #require(t.waitFor("Proceed? [y/N] "), "\(t.text)")
            t.type("n\r")
            #expect(t.exitStatus() == 0)
            #expect(t.text.contains("nothing removed"), "\(t.text)")
            #expect(!t.text.contains("error:"), "\(t.text)")
            #expect(FileManager.default.fileExists(atPath: model.path))
        }
    #endif
}

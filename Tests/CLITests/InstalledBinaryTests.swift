import Foundation
import TestSupport
import Testing

/// `make install` as a user meets it: scripts/install.sh (what the Makefile runs) puts this
/// build's binary, stripped, into a temporary prefix; a shell elsewhere runs it by name from
/// PATH, so `argv[0]` is just "phikit" and the registry and the demo model must be found from
/// the executable's real path. Then uninstall takes everything away, folders included. (The
/// debug binary stands in for the release one: a release build is minutes, too slow here.)
@Suite("installed binary, run by name")
struct InstalledBinaryTests {
    @Test("run, list --available, serve and completions work from another directory")
    func runByName() throws {
        let binary = try #require(Phikit.url)
        let scratch = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("prefix")
        let elsewhere = scratch.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        let install = TestPaths.repository.appendingPathComponent("scripts/install.sh").path

        let installed = try Self.bash(
            "\"$INSTALL\" install \"$BINARY\" \"$PREFIX\"",
            in: elsewhere, ["INSTALL": install, "BINARY": binary.path, "PREFIX": prefix.path])
        #expect(installed.status == 0, "\(installed.stderr)")
        let bin = prefix.appendingPathComponent("bin/phikit").path
        let size = try FileManager.default.attributesOfItem(atPath: bin)[.size] as? Int ?? 0
        let original = try FileManager.default.attributesOfItem(atPath: binary.path)[.size] as? Int
        #expect(size > 0 && size < original ?? 0, "stripped: \(size) < \(original ?? 0) bytes")

        // A PATH with the prefix's bin first; the shell starts in a directory that holds
        // nothing of phikit's, and phikit is named, not pathed.
        let script = """
            export PATH="$PREFIX/bin:$PATH"
            [ "$(command -v phikit)" = "$PREFIX/bin/phikit" ] || exit 3
            phikit run stories-260k -m 6 --temp 0 -p "Once upon a time" || exit 4
            printf '\\n--- list\\n'
            phikit list --available || exit 5
            printf '\\n--- completions\\n'
            source <(phikit completions bash)
            COMP_WORDS=(phikit run stories); COMP_CWORD=2; _phikit; echo "${COMPREPLY[*]}"
            printf '\\n--- serve\\n'
            phikit serve stories-260k --port 0 --threads 1 2> serve.log &
            server=$!
            for _ in $(seq 600); do
                port=$(sed -n 's|.*on http://127.0.0.1:\\([0-9]*\\).*|\\1|p' serve.log | head -1)
                [ -n "$port" ] && break
                kill -0 $server 2>/dev/null || { cat serve.log >&2; exit 1; }
                sleep 0.1
            done
            exec 3<>"/dev/tcp/127.0.0.1/$port"
            printf 'GET /v1/models HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n' >&3
            cat <&3
            kill $server; wait $server
            exit 0
            """
        let r = try Self.bash(script, in: elsewhere, ["PREFIX": prefix.path])
        #expect(r.status == 0, "\(r.stderr)")
        let parts = r.stdout.components(separatedBy: "\n--- ")
        try #require(parts.count == 4, "\(r.stdout)\n\(r.stderr)")
        // The same story as the build's own binary tells (the demo model was found and ran).
        let reference = try Phikit.run(
            "run", "stories-260k", "-m", "6", "--temp", "0", "-p", "Once upon a time")
        #expect(!reference.stdout.isEmpty && parts[0] == reference.stdout, "\(parts[0])")
        #expect(parts[1].contains("stories-260k"), "\(parts[1])")
        #expect(parts[2] == "completions\nstories-260k stories260k\n", "\(parts[2])")
        #expect(parts[3].contains("HTTP/1.1 200") || parts[3].contains("HTTP/1.0 200"), "\(parts[3])")
        #expect(parts[3].contains("\"stories-260k\""), "\(parts[3])")

        let removed = try Self.bash(
            "\"$INSTALL\" uninstall \"$PREFIX\"", in: elsewhere,
            ["INSTALL": install, "PREFIX": prefix.path])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: prefix.path), "uninstall left the prefix")
    }

    @Test("uninstall keeps a folder that holds something install did not put there")
    func uninstallKeepsOthers() throws {
        let binary = try #require(Phikit.url)
        let scratch = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: scratch) }
        let prefix = scratch.appendingPathComponent("prefix")
        let install = TestPaths.repository.appendingPathComponent("scripts/install.sh").path
        let env = ["INSTALL": install, "BINARY": binary.path, "PREFIX": prefix.path]
        // STRIP=: the first test checks stripping; this one only needs the files.
        let r = try Self.bash(
            """
            set -e
            STRIP=: "$INSTALL" install "$BINARY" "$PREFIX"
            echo mine > "$PREFIX/bin/other-tool"
            "$INSTALL" uninstall "$PREFIX"
            find "$PREFIX" | sort
            """, in: scratch, env)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(
            r.stdout.split(separator: "\n").map(String.init)
                == [prefix.path, prefix.path + "/bin", prefix.path + "/bin/other-tool"],
            "\(r.stdout)")
    }

    /// `script` run by bash in `directory`, with `environment` added to this process's.
    static func bash(
        _ script: String, in directory: URL, _ environment: [String: String]
    ) throws -> PhikitResult {
        var environment = environment
        environment["SCRIPT_DIRECTORY"] = directory.path
        return try Phikit.run(
            ["-c", "cd \"$SCRIPT_DIRECTORY\"\n" + script], environment: environment,
            binary: URL(fileURLWithPath: "/bin/bash"))
    }
}

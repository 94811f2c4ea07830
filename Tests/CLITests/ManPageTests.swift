import Foundation
import TestSupport
import Testing

/// `phikit help --man`: a man page made from the command table that `--help` and the
/// completions use, and docs/phikit.1 (what `make install` installs) is that page.
@Suite("phikit help --man")
struct ManPageTests {
    @Test("every command and every option of its help page, in troff groff accepts")
    func everyCommand() throws {
        let r = try Phikit.run("help", "--man")
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.hasPrefix(".TH PHIKIT 1 "))
        for command in CompletionsCLITests.commands {
            let start = try #require(r.stdout.range(of: "\n.SS \(command)"), "\(command)")
            let rest = r.stdout[start.upperBound...]
            let section = rest.prefix(upTo: rest.range(of: "\n.SS ")?.lowerBound ?? rest.endIndex)
            for option in try CompletionsCLITests.helpOptions(command) {
                let troff = option.replacingOccurrences(of: "-", with: "\\-")
                #expect(section.contains(troff), "\(command) \(option)")
            }
        }
        for section in ["NAME", "SYNOPSIS", "COMMANDS", "ENVIRONMENT", "EXIT STATUS"] {
            #expect(r.stdout.contains("\n.SH \(section)\n"), "\(section)")
        }
        #expect(r.stdout.contains("PHIKIT\\_HOME") || r.stdout.contains("PHIKIT_HOME"))

        // groff, where it is installed, reads it without a warning (-ww: all of them).
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/groff") else { return }
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = dir.appendingPathComponent("phikit.1")
        try Data(r.stdout.utf8).write(to: page)
        let g = try Phikit.run(
            ["-man", "-Tutf8", "-ww", "-z", page.path],
            binary: URL(fileURLWithPath: "/usr/bin/groff"))
        #expect(g.status == 0 && g.stderr.isEmpty, "\(g.stderr)")
    }

    @Test("docs/phikit.1 is the page this binary prints (else: make man)")
    func committedPageIsCurrent() throws {
        let r = try Phikit.run("help", "--man")
        let committed = try String(
            contentsOf: TestPaths.repository.appendingPathComponent("docs/phikit.1"),
            encoding: .utf8)
        #expect(committed == r.stdout, "docs/phikit.1 is stale: run make man")
    }

    @Test("--man with a command is a usage error")
    func manWithCommand() throws {
        let r = try Phikit.run("help", "--man", "run")
        #expect(r.status == 64)
        #expect(r.stderr.contains("error: --man"), "\(r.stderr)")
    }
}

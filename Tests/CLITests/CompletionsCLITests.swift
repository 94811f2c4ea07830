import Foundation
import Testing

/// `phikit completions bash|zsh|fish`: scripts the shells accept, naming every command and
/// every option that `phikit help <command>` lists, and completing model names from `list`.
@Suite("phikit completions")
struct CompletionsCLITests {
    /// `-p`, `--prompt`, …: the names that open the option lines of a help page (indented
    /// at most six spaces; the text after the first wide gap is the description).
    static func helpOptions(_ command: String) throws -> [String] {
        let page = try Phikit.run(["help", command]).stdout
        return page.split(separator: "\n").flatMap { line -> [String] in
            let indent = line.prefix { $0 == " " }.count
            guard (2...6).contains(indent), line.dropFirst(indent).hasPrefix("-") else { return [] }
            let spec = line.dropFirst(indent).components(separatedBy: "  ")[0]
            return spec.split(whereSeparator: { $0 == " " || $0 == "," })
                .filter { $0.hasPrefix("-") }.map { String($0.split(separator: "=")[0]) }
        }
    }

    static let commands = [
        "pull", "convert", "verify", "run", "chat", "serve", "list", "rm", "inspect", "tokenize",
        "help", "version", "completions",
    ]

    @Test("bash: valid syntax (bash -n), every command and option of the help pages")
    func bash() throws {
        let r = try Phikit.run(["completions", "bash"])
        #expect(r.status == 0)
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("phikit.bash")
        try Data(r.stdout.utf8).write(to: script)
        #expect(try Self.shell("/bin/bash", ["-n", script.path]).status == 0)
        for command in Self.commands {
            let line = try #require(
                r.stdout.split(separator: "\n").first {
                    $0.hasPrefix("        \(command)") && $0.contains("flags=")
                }, "\(command)")
            let words = Set(line.split(whereSeparator: { " \";=|)".contains($0) }).map(String.init))
            for option in try Self.helpOptions(command) {
                #expect(words.contains(option), "\(command) \(option)")
            }
        }
    }

    @Test("bash: completes commands, options and the model names `list --names` prints")
    func bashCompletes() throws {
        let binary = try #require(Phikit.url)
        let program = """
            source <(phikit completions bash)
            complete_words() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _phikit; echo "${COMPREPLY[*]}"; }
            complete_words phikit tok
            complete_words phikit run --max-k
            complete_words phikit run stories
            complete_words phikit completions f
            """
        let r = try Self.shell(
            "/bin/bash", ["-c", program],
            path: binary.deletingLastPathComponent().path)
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout == "tokenize\n--max-kv-size\nstories-260k stories260k\nfish\n")
    }

    @Test("zsh and fish: scripts the shells parse, with every command", arguments: ["zsh", "fish"])
    func otherShells(_ shell: String) throws {
        let r = try Phikit.run(["completions", shell])
        #expect(r.status == 0)
        for command in Self.commands { #expect(r.stdout.contains(command)) }
        for option in try Self.helpOptions("run") {
            #expect(r.stdout.contains(option.drop { $0 == "-" }))
        }
        guard
            let path = ["/usr/bin/\(shell)", "/bin/\(shell)"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { return }  // the shell is not installed here: the text checks above stand
        let dir = try TinyModel.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let script = dir.appendingPathComponent("phikit.\(shell)")
        try Data(r.stdout.utf8).write(to: script)
        let check = try Self.shell(path, [shell == "zsh" ? "-n" : "--no-execute", script.path])
        #expect(check.status == 0, "\(check.stderr)")
        guard shell == "fish", let binary = Phikit.url else { return }
        let completed = try Self.shell(
            path,
            [
                "-c",
                "source \(script.path); complete -C 'phikit run --max-k'; complete -C 'phikit run stories-2'",
            ],
            path: binary.deletingLastPathComponent().path)
        #expect(completed.stdout == "--max-kv-size\nstories-260k\n", "\(completed.stderr)")
    }

    @Test func unknownShell() throws {
        let r = try Phikit.run(["completions", "tcsh"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown shell 'tcsh'"))
    }

    @Test("list --names: one name per line, registry names of the models here first")
    func listNames() throws {
        let r = try Phikit.run(["list", "--names"])
        #expect(r.status == 0)
        #expect(r.stdout.split(separator: "\n").first == "stories-260k")
        let available = try Phikit.run(["list", "--available", "--names", "phi-4"])
        #expect(available.stdout.split(separator: "\n").contains("phi-4-mini"))
    }

    /// Runs a shell (Phikit's harness runs any binary), phikit's directory first on PATH.
    static func shell(
        _ executable: String, _ arguments: [String], path: String? = nil
    ) throws -> PhikitResult {
        let search = path.map { $0 + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "") }
        return try Phikit.run(
            arguments, environment: search.map { ["PATH": $0] } ?? [:],
            binary: URL(fileURLWithPath: executable))
    }
}
